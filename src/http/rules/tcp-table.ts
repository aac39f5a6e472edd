/**
 * The kernel's table of TCP sockets (/proc/net/tcp and tcp6) read as the connections a listener holds, grouped by
 * the address they come from, and which of them go past a per-address cap. Pure: text in, decisions out.
 *
 * An IPv6 client usually has a whole /64 to itself, so IPv6 addresses count by their /64; an IPv4 address mapped
 * into IPv6 (::ffff:a.b.c.d, a dual-stack listener) counts as the IPv4 address.
 */

export interface TcpConnection {
  /** The peer: dotted IPv4, or IPv6 as eight groups. */
  peer: string;
  /** What the cap counts by: the IPv4 address, or the /64 of an IPv6 one ("xxxx:xxxx:xxxx:xxxx::/64"). */
  address: string;
  localPort: number;
  /** The socket's inode: names the descriptor (/proc/self/fd/N -> socket:[inode]); newer sockets have larger ones. */
  inode: number;
}

const LISTEN = "0A";
const TIME_WAIT = "06";
const SYN_RECV = "03";

/**
 * The connections of one table's text (header line skipped); listeners and sockets without a descriptor left out.
 * With `port`, only lines that name it are read (the table holds every socket of the host's network namespace).
 */
export function parseTcpTable(text: string, port?: number): TcpConnection[] {
  const out: TcpConnection[] = [];
  const token = port === undefined ? null : `:${port.toString(16).toUpperCase().padStart(4, "0")} `;
  for (const line of text.split("\n")) {
    if (token !== null && !line.includes(token)) continue;
    const f = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (f.length < 10 || !f[0].endsWith(":")) continue;
    const state = f[3];
    if (state === LISTEN || state === TIME_WAIT || state === SYN_RECV) continue;
    const inode = Number(f[9]);
    if (!Number.isSafeInteger(inode) || inode === 0) continue;
    const local = f[1].split(":");
    const remote = f[2].split(":");
    if (local.length !== 2 || remote.length !== 2) continue;
    const peer = peerAddress(remote[0]);
    if (peer === null) continue;
    out.push({ ...peer, localPort: parseInt(local[1], 16), inode });
  }
  return out;
}

/** The kernel writes each 32-bit word of an address in host order (little-endian here). */
function wordBytes(hex: string): number[] {
  const v = parseInt(hex, 16);
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}

function peerAddress(hex: string): { peer: string; address: string } | null {
  if (!/^[0-9A-Fa-f]+$/.test(hex)) return null;
  if (hex.length === 8) {
    const v4 = wordBytes(hex).join(".");
    return { peer: v4, address: v4 };
  }
  if (hex.length !== 32) return null;
  const bytes = [0, 8, 16, 24].flatMap((at) => wordBytes(hex.slice(at, at + 8)));
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) {
    const v4 = bytes.slice(12).join(".");
    return { peer: v4, address: v4 };
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return { peer: groups.join(":"), address: `${groups.slice(0, 4).join(":")}::/64` };
}

export interface CapRule {
  /** The listener's port: only connections to it count. */
  port: number;
  /** Most connections one address may hold. */
  cap: number;
  /** Peers never capped nor counted (trusted proxies: many clients behind one address). */
  exempt: (peer: string) => boolean;
}

/** Per address over the cap: how many it holds, and the inodes of its newest connections beyond the cap. */
export function overCap(connections: readonly TcpConnection[], rule: CapRule): Map<string, { held: number; cut: number[] }> {
  const byAddress = new Map<string, number[]>();
  const exempt = new Map<string, boolean>();
  for (const c of connections) {
    if (c.localPort !== rule.port) continue;
    let free = exempt.get(c.peer);
    if (free === undefined) exempt.set(c.peer, (free = rule.exempt(c.peer)));
    if (free) continue;
    let list = byAddress.get(c.address);
    if (!list) byAddress.set(c.address, (list = []));
    list.push(c.inode);
  }
  const over = new Map<string, { held: number; cut: number[] }>();
  for (const [address, inodes] of byAddress) {
    if (inodes.length <= rule.cap) continue;
    // The oldest keep their place: a client past its cap loses the connections it opened last.
    inodes.sort((a, b) => a - b);
    over.set(address, { held: inodes.length, cut: inodes.slice(rule.cap) });
  }
  return over;
}
