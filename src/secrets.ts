/** Secret generation, hashing and constant-time comparison for API keys and the admin token. */
import { timingSafeEqual } from "node:crypto";

const KEY_PREFIX = "gk-";

/** 24 random bytes (192 bits) as base64url. */
export function randomToken(bytes = 24): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Buffer.from(buf).toString("base64url");
}

export function newApiKeySecret(): string {
  return KEY_PREFIX + randomToken(24);
}

export function newAdminToken(): string {
  return "gat-" + randomToken(24);
}

export function sha256Hex(text: string): string {
  return Bun.SHA256.hash(text, "hex");
}

/** The raw digest, for comparing with `digestsEqual` without decoding hex on every request. */
export function sha256Bytes(text: string): Uint8Array {
  return Bun.SHA256.hash(text) as Uint8Array;
}

/** Compares two raw digests of equal length without leaking where they differ. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The part of a secret that may be shown to identify it: never enough to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, KEY_PREFIX.length + 6);
}

/** The same for hex digests (the admin token and sessions, which are not on the per-request path). */
export function hashesEqual(aHex: string, bHex: string): boolean {
  return aHex.length === bHex.length && digestsEqual(Buffer.from(aHex, "hex"), Buffer.from(bHex, "hex"));
}
