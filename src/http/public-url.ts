/**
 * The external base URL (`scheme://host[:port]`) of a request, for links the site hands out (downloadUrl,
 * manifest and heartbeat URLs). Pure apart from reading the request's headers and recorded peer address.
 *
 * Rules, in order:
 * 1. GANTRY_PUBLIC_URL (config.publicUrl) wins outright.
 * 2. X-Forwarded-Host / X-Forwarded-Proto count only when the socket peer is a trusted proxy
 *    (config.trustedProxies: addresses or CIDR ranges, IPv4 or IPv6). From anyone else they are ignored,
 *    so a client cannot make us print links to a host of its choosing.
 * 3. Otherwise the Host header (then the request URL's host).
 * 4. Scheme, unless a trusted proxy said it: plain http for loopback (`localhost`, `*.localhost`,
 *    127.0.0.0/8, [::1]); https for a real domain (the spec: "under a real domain it produces HTTPS URLs";
 *    TLS is expected to terminate in front of us).
 *    Decision for IP literals and single-label names (`192.168.1.20:8080`, `gantry:8080`): they keep the
 *    scheme the request actually arrived with. Public CAs almost never certify IP addresses or intranet
 *    names, so such a host is someone reaching this process directly, and inventing https would hand out
 *    links that cannot work.
 */
import type { Config } from "../config";
import { peerAddress } from "./client-address";
import { isTrustedPeer, parseIp } from "../rules/ip-ranges";

export interface PublicUrlInput {
  /** The Host header (may be null for HTTP/1.0 clients). */
  host: string | null;
  /** The URL the server built for the request; its scheme is the connection's own. */
  requestUrl: string;
  forwardedHost: string | null;
  forwardedProto: string | null;
  /** The socket peer address. */
  peer: string;
}

/**
 * Answers that depend only on the scheme and Host are kept (per config; bounded, since clients choose the Host):
 * requests without forwarding headers, and every request when no proxy is trusted (forwarding headers from an
 * untrusted peer are ignored, so they cannot change the answer). GANTRY_PUBLIC_URL is normalised once.
 */
interface Memo {
  /** GANTRY_PUBLIC_URL as read last, and its normalised form. */
  publicUrl: string;
  fixed: string;
  http: Map<string, string>;
  https: Map<string, string>;
}
const memos = new WeakMap<object, Memo>();
const MEMO_ENTRIES = 256;

function memoOf(config: Pick<Config, "publicUrl" | "trustedProxies">): Memo {
  let memo = memos.get(config);
  if (!memo) {
    memo = { publicUrl: "", fixed: "", http: new Map(), https: new Map() };
    memos.set(config, memo);
  }
  if (config.publicUrl !== memo.publicUrl) {
    memo.publicUrl = config.publicUrl;
    memo.fixed = config.publicUrl ? resolvePublicBaseUrl({ host: null, requestUrl: "", forwardedHost: null, forwardedProto: null, peer: "" }, config) : "";
  }
  return memo;
}

export function publicBaseUrl(request: Request, config: Pick<Config, "publicUrl" | "trustedProxies">): string {
  const memo = memoOf(config);
  if (memo.fixed !== "") return memo.fixed;
  const host = request.headers.get("host");
  if (host === null) return resolveFromRequest(request, config);
  if (config.trustedProxies.length > 0 && (request.headers.has("x-forwarded-host") || request.headers.has("x-forwarded-proto"))) {
    return resolveFromRequest(request, config);
  }
  const byHost = request.url.startsWith("https:") ? memo.https : memo.http;
  let base = byHost.get(host);
  if (base === undefined) {
    base = resolveFromRequest(request, config);
    if (byHost.size >= MEMO_ENTRIES) byHost.clear();
    byHost.set(host, base);
  }
  return base;
}

function resolveFromRequest(request: Request, config: Pick<Config, "publicUrl" | "trustedProxies">): string {
  return resolvePublicBaseUrl(
    {
      host: request.headers.get("host"),
      requestUrl: request.url,
      forwardedHost: request.headers.get("x-forwarded-host"),
      forwardedProto: request.headers.get("x-forwarded-proto"),
      peer: peerAddress(request),
    },
    config,
  );
}

export function resolvePublicBaseUrl(input: PublicUrlInput, config: Pick<Config, "publicUrl" | "trustedProxies">): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, "");

  const connectionScheme = input.requestUrl.toLowerCase().startsWith("https:") ? "https" : "http";
  const trusted = isTrustedPeer(input.peer, config.trustedProxies);

  let host: string | null = null;
  let scheme: "http" | "https" | null = null;
  if (trusted) {
    host = validHost(firstListValue(input.forwardedHost));
    const proto = firstListValue(input.forwardedProto)?.toLowerCase();
    if (proto === "http" || proto === "https") scheme = proto;
  }
  host ??= validHost(input.host) ?? validHost(hostOfUrl(input.requestUrl)) ?? "localhost";
  scheme ??= schemeForHost(host, connectionScheme);
  return `${scheme}://${host.toLowerCase()}`;
}

/**
 * A request that came over TLS is answered with https (this process serves TLS there, and nothing plain);
 * otherwise: http for loopback, the connection's own scheme for IP literals and single-label names, else https.
 */
export function schemeForHost(host: string, connectionScheme: "http" | "https" = "http"): "http" | "https" {
  if (connectionScheme === "https") return "https";
  const name = hostName(host);
  if (isLoopbackName(name)) return "http";
  if (parseIp(name) !== null || !name.includes(".")) return connectionScheme;
  return "https";
}

/** `localhost`, `*.localhost` (RFC 6761), 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, "");
  if (n === "localhost" || n.endsWith(".localhost")) return true;
  const ip = parseIp(n);
  if (!ip) return false;
  if (ip.kind === 4) return ip.value >> 24n === 127n;
  return ip.value === 1n;
}

/** Host part of `host[:port]` / `[v6]:port`, without brackets. */
function hostName(host: string): string {
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  const colon = host.lastIndexOf(":");
  return colon >= 0 ? host.slice(0, colon) : host;
}

function firstListValue(value: string | null): string | null {
  if (value === null) return null;
  const first = value.split(",")[0].trim();
  return first === "" ? null : first;
}

/**
 * A Host value we are willing to print in a link: a DNS name or IPv4 address with an optional port, or a
 * bracketed IPv6 address with an optional port. Anything else (spaces, slashes, `@`, quotes) is refused, so
 * header junk never ends up in a URL.
 */
export function validHost(value: string | null): string | null {
  if (!value) return null;
  const v = value.trim();
  if (v.length > 260) return null;
  const port = "(?::(\\d{1,5}))?";
  // Labels also accept `_` (container and intranet names use it, and it is harmless in a URL).
  const label = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9_])?";
  const name = new RegExp(`^(${label}(?:\\.${label})*\\.?)${port}$`);
  const v6 = new RegExp(`^\\[([0-9A-Fa-f:.]+)\\]${port}$`);
  let m = name.exec(v);
  if (m) return portOk(m[2]) ? v : null;
  m = v6.exec(v);
  if (m && parseIp(m[1])?.kind === 6) return portOk(m[2]) ? v : null;
  return null;
}

function portOk(port: string | undefined): boolean {
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}

function hostOfUrl(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
