/**
 * IP addresses and the ranges of trusted proxies (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`): parsing and
 * membership. Pure, and shared by the settings check, the client address, the public URL and the throttles, so all
 * of them read a range the same way.
 */

export interface ParsedIp {
  kind: 4 | 6;
  /** IPv4 as a 32-bit value; IPv6 as 128 bits. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) comes back as IPv4. */
  value: bigint;
}

export function parseIp(text: string): ParsedIp | null {
  const s = text.trim().replace(/^\[|\]$/g, "");
  const v4 = parseIpv4(s);
  if (v4 !== null) return { kind: 4, value: v4 };
  const v6 = parseIpv6(s.replace(/%.*$/, ""));
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { kind: 4, value: v6 & 0xffffffffn };
  return { kind: 6, value: v6 };
}

function parseIpv4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    value = (value << 8n) | BigInt(p);
  }
  return value;
}

function parseIpv6(s: string): bigint | null {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || !s.includes(":")) return null;
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseIpv4(item);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(item)) {
        out.push(parseInt(item, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array(missing).fill(0), ...tail];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** Whether `peer` matches any entry of the trusted-proxy list (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`). */
export function isTrustedPeer(peer: string, trusted: readonly string[]): boolean {
  const ip = parseIp(peer);
  if (!ip) return false;
  return trusted.some((entry) => ipInRange(ip, entry));
}

/**
 * One trusted-proxy entry (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`) as a network and prefix length, or null
 * when it is neither an address nor a CIDR range. The settings check uses it too, so what is accepted is what matches.
 */
export function parseProxyRange(entry: string): { net: ParsedIp; bits: number } | null {
  const parts = entry.trim().split("/");
  if (parts.length > 2) return null;
  const net = parseIp(parts[0]);
  if (!net) return null;
  const width = net.kind === 4 ? 32 : 128;
  if (parts.length === 1) return { net, bits: width };
  if (!/^\d{1,3}$/.test(parts[1]) || Number(parts[1]) > width) return null;
  return { net, bits: Number(parts[1]) };
}

function ipInRange(ip: ParsedIp, entry: string): boolean {
  const range = parseProxyRange(entry);
  if (!range || range.net.kind !== ip.kind) return false;
  const shift = BigInt((ip.kind === 4 ? 32 : 128) - range.bits);
  return ip.value >> shift === range.net.value >> shift;
}
