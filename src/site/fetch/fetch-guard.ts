/**
 * Where the site may fetch from. Asset URLs and sync URLs are named by an admin (or by a remote release list), so a
 * fetch must not become a way into the server's own network: every hop's host is resolved and each of its addresses
 * must be public. Loopback, private, link-local (cloud metadata at 169.254.169.254 included), unique-local,
 * carrier-grade NAT, multicast, reserved and unspecified addresses are refused, in IPv4 and IPv6, and in the IPv6
 * forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4). A host the operator lists in
 * GANTRY_ALLOWED_FETCH_HOSTS (a name, or an address) is let through.
 *
 * The refusal reads like any failure to reach a host (`DownloadFetchError` "cannot reach HOST"), so an answer never
 * tells which internal addresses exist; the reason goes to the log. Redirects are followed by hand by
 * `fetchFollowingRedirects`, which calls the guarded fetch once per hop, so a redirect to an internal address is
 * refused too. Left open: a name whose address changes between this lookup and the connection (DNS rebinding).
 */
import { lookup } from "node:dns/promises";
import { parseIp, parseProxyRange, type ParsedIp } from "../../rules/ip-ranges";

/** Networks that are not the public internet (RFC 6890 and friends). */
const BLOCKED = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "100::/64",
  "2001:db8::/32",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
].map((r) => parseProxyRange(r)!);

function inRange(ip: ParsedIp, range: { net: ParsedIp; bits: number }): boolean {
  if (range.net.kind !== ip.kind) return false;
  const shift = BigInt((ip.kind === 4 ? 32 : 128) - range.bits);
  return ip.value >> shift === range.net.value >> shift;
}

/** The IPv4 address an IPv6 one carries (compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), or null. */
function embeddedIpv4(ip: ParsedIp): ParsedIp | null {
  if (ip.kind !== 6) return null;
  const v = ip.value;
  if (v >> 32n === 0n && v > 1n) return { kind: 4, value: v & 0xffffffffn };
  if (v >> 32n === 0x64ff9b0000000000000000n) return { kind: 4, value: v & 0xffffffffn };
  if (v >> 112n === 0x2002n) return { kind: 4, value: (v >> 80n) & 0xffffffffn };
  return null;
}

/** Whether an address is on the public internet (IPv4-mapped IPv6 is read as its IPv4 address by parseIp). */
export function isPublicAddress(address: string): boolean {
  const ip = parseIp(address);
  if (!ip) return false;
  if (BLOCKED.some((r) => inRange(ip, r))) return false;
  const inner = embeddedIpv4(ip);
  return inner === null || !BLOCKED.some((r) => inRange(inner, r));
}

/** A destination refused by the guard: reported to callers like an unreachable host, with the reason for the log. */
export class DestinationRefused extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${host}`);
    this.name = "DestinationRefused";
  }
}

export interface FetchGuardOptions {
  /** GANTRY_ALLOWED_FETCH_HOSTS: host names or IP addresses fetched from even when they are not public. */
  allowedHosts: readonly string[];
  /** Resolves a host name to all its addresses (node:dns `lookup` by default; tests may pass their own). */
  resolve?: (host: string) => Promise<string[]>;
  /** Told why a destination was refused (for the operator's log; never shown to a caller). */
  onRefused?: (host: string, reason: string) => void;
}

const resolveAll = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The host of a URL as listed in the setting: lower case, IPv6 without brackets. */
function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
}

/** Throws DestinationRefused unless every address of `url`'s host is public or the host is allowed. */
export async function checkDestination(url: URL, options: FetchGuardOptions): Promise<void> {
  const host = hostOf(url);
  const allowed = new Set(options.allowedHosts.map((h) => h.trim().toLowerCase().replace(/^\[|\]$/g, "")));
  if (allowed.has(host)) return;
  const allowedIps = [...allowed].map((h) => parseIp(h)).filter((ip): ip is ParsedIp => ip !== null);
  const isAllowedIp = (address: string) => {
    const ip = parseIp(address);
    return ip !== null && allowedIps.some((a) => a.kind === ip.kind && a.value === ip.value);
  };
  let addresses: string[];
  if (parseIp(host)) addresses = [host];
  else {
    try {
      addresses = await (options.resolve ?? resolveAll)(host);
    } catch (err) {
      throw new DestinationRefused(url.host, `the name does not resolve (${(err as Error).message})`);
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(url.host, "the name has no address");
  const internal = addresses.filter((a) => !isPublicAddress(a) && !isAllowedIp(a));
  if (internal.length > 0) {
    throw new DestinationRefused(url.host, `it resolves to ${internal.join(", ")}, not a public address; list the host in GANTRY_ALLOWED_FETCH_HOSTS to allow it`);
  }
}

/**
 * `fetch` that checks each destination first and never follows a redirect itself (each hop is one call, checked
 * by itself: `fetchFollowingRedirects` follows them).
 */
export function guardedFetch(inner: typeof fetch, options: FetchGuardOptions): typeof fetch {
  const guarded = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    try {
      await checkDestination(url, options);
    } catch (err) {
      if (err instanceof DestinationRefused) options.onRefused?.(err.host, err.reason);
      throw err;
    }
    return inner(input, { ...init, redirect: "manual" });
  };
  return Object.assign(guarded, { preconnect: inner.preconnect }) as typeof fetch;
}
