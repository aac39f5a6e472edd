/** Reading one cookie and writing the session cookie; and whether the browser reached us over HTTPS. */
import type { Config } from "../config";
import { peerAddress } from "./client-address";
import { isTrustedPeer } from "../rules/ip-ranges";

/** The value of cookie `name` in a Cookie header, or null. Values are opaque to us (no decoding). */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export interface CookieOptions {
  secure: boolean;
  /** Omitted: a browser-session cookie; 0 deletes it. */
  maxAgeSeconds?: number;
}

/** HttpOnly, SameSite=Strict, Path=/, Secure when the browser is on HTTPS. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  let out = `${name}=${value}; Path=/; HttpOnly; SameSite=Strict`;
  if (options.secure) out += "; Secure";
  if (options.maxAgeSeconds !== undefined) out += `; Max-Age=${options.maxAgeSeconds}`;
  return out;
}

/**
 * Whether the browser talks to us over HTTPS: GANTRY_PUBLIC_URL says so, or the connection itself is TLS, or
 * a trusted proxy says so in X-Forwarded-Proto. Decision: a real domain name alone does not count (unlike
 * public-url.ts's link building): a Secure cookie sent over plain HTTP is dropped by the browser, and the
 * operator could never sign in.
 */
export function isHttpsRequest(request: Request, config: Pick<Config, "publicUrl" | "trustedProxies">): boolean {
  if (config.publicUrl) return config.publicUrl.startsWith("https:");
  if (request.url.startsWith("https:")) return true;
  if (!isTrustedPeer(peerAddress(request), config.trustedProxies)) return false;
  return (request.headers.get("x-forwarded-proto") ?? "").split(",")[0].trim().toLowerCase() === "https";
}
