/**
 * One-time download tokens of `/dl/{token}`: generation, the storage key, and the rules of use (pure).
 *
 * A token is 256 random bits (base64url, 43 characters), bound to one asset and to that asset's digest
 * when it was issued, and valid for `downloadTokenTtlSeconds`. Within that time it answers HEAD and Range
 * requests (resume, differential updaters) any number of times. Its first *complete* GET consumes it.
 *
 * Decision: "complete GET" = a GET answered with the whole file (no Range, or a Range we had to ignore).
 * The token is consumed when that response starts, not when its last byte leaves: the mirror path sends
 * files with sendfile(2), which reports no completion, and consuming at the start is also what makes two
 * racing full GETs impossible. A client whose full download breaks goes back to the stable
 * `/api/v1/download/{id}` URL for a fresh token.
 */
import { randomToken, sha256Hex } from "../../secrets";
import type { TokenRecord } from "./download-repository";

const TOKEN_BYTES = 32;
/** 32 bytes in base64url without padding. Anything else is refused before touching the database. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export function newDownloadToken(): string {
  return randomToken(TOKEN_BYTES);
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** What is stored: a digest, so the table never holds a usable link. */
export function tokenStorageKey(token: string): string {
  return sha256Hex(token);
}

export type TokenVerdict =
  | { ok: true }
  | { ok: false; status: 404 | 410; reason: "unknown" | "expired" | "used" | "changed" };

/**
 * The rule of use, given the stored token (or null), the asset's current digest, and the clock.
 * Unknown tokens are 404; tokens that existed but can no longer be used are 410 Gone.
 */
export function judgeToken(token: TokenRecord | null, currentSha256: string | null, now: number): TokenVerdict {
  if (!token || currentSha256 === null) return { ok: false, status: 404, reason: "unknown" };
  if (token.consumedAt !== null) return { ok: false, status: 410, reason: "used" };
  if (now >= token.expiresAt) return { ok: false, status: 410, reason: "expired" };
  // New bytes behind the asset since the link was made: the client asked for the old ones.
  if (token.sha256 !== currentSha256) return { ok: false, status: 410, reason: "changed" };
  return { ok: true };
}

export const TOKEN_REASON_TEXT: Record<"unknown" | "expired" | "used" | "changed", string> = {
  unknown: "No such download link.",
  expired: "This download link has expired; request the download again from /api/v1/download/{assetId}.",
  used: "This download link has been used; request the download again from /api/v1/download/{assetId}.",
  changed: "The file behind this download link has changed; request the download again from /api/v1/download/{assetId}.",
};
