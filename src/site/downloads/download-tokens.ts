/**
 * Download links of `/dl/{token}`: signed, self-verifying tokens (no row is written to mint one), and the rules
 * of their use.
 *
 * A token is 81 bytes in base64url (108 characters): version (1), asset id (8), expiry in ms (8), a tag of the
 * asset's SHA-256 when it was issued (8), a tag of the client address it was issued to (8), a random nonce (16),
 * and an HMAC-SHA256 of all that under the server's download secret (32). Without the secret nobody can make
 * or alter one; the plain token is never stored anywhere.
 *
 * Decision (the life of a link): within its lifetime (`downloadTokenTtlSeconds`) a link answers any number of
 * GET and HEAD requests, whole or ranged, so an interrupted download resumes on the same link (wget -c,
 * curl -C -, electron-updater, download managers with several connections). It is not a reusable public link:
 * it works only for the client address it was issued to (an IPv6 client: its /64), and never after its expiry.
 * It is bound to the bytes the asset had when it was issued (new bytes: 410).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { addressKey } from "../../http/throttle";

const VERSION = 1;
const PAYLOAD_BYTES = 1 + 8 + 8 + 8 + 8 + 16;
const MAC_BYTES = 32;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;
/** 81 bytes in base64url without padding. Anything else is refused before any work. */
const TOKEN_RE = /^[A-Za-z0-9_-]{108}$/;

/** What a verified token says. */
export interface TokenClaims {
  assetId: number;
  expiresAt: number;
  /** Whether the asset's SHA-256 still has the tag the token carries. */
  shaTag: Uint8Array;
  /** Whether the requester's address is the one the token was issued to. */
  sameClient: boolean;
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** Signs and verifies tokens, and derives the count key, under one server secret (32 random bytes or more). */
export class DownloadTokenSigner {
  constructor(private readonly secret: Uint8Array) {
    if (secret.length < 32) throw new Error("download secret too short");
  }

  mint(assetId: number, sha256: string, client: string, expiresAt: number): string {
    const buf = Buffer.alloc(TOKEN_BYTES);
    buf.writeUInt8(VERSION, 0);
    buf.writeBigUInt64BE(BigInt(assetId), 1);
    buf.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(expiresAt))), 9);
    buf.set(shaTagOf(sha256), 17);
    buf.set(this.clientTag(client), 25);
    crypto.getRandomValues(buf.subarray(33, PAYLOAD_BYTES));
    buf.set(this.mac(buf.subarray(0, PAYLOAD_BYTES)), PAYLOAD_BYTES);
    return buf.toString("base64url");
  }

  /** The claims of an authentic token, or null for anything malformed, forged or altered. */
  open(token: string, client: string): TokenClaims | null {
    if (!isWellFormedToken(token)) return null;
    const buf = Buffer.from(token, "base64url");
    if (buf.length !== TOKEN_BYTES || buf[0] !== VERSION) return null;
    if (!timingSafeEqual(this.mac(buf.subarray(0, PAYLOAD_BYTES)), buf.subarray(PAYLOAD_BYTES))) return null;
    const assetId = Number(buf.readBigUInt64BE(1));
    const expiresAt = Number(buf.readBigUInt64BE(9));
    return {
      assetId,
      expiresAt,
      shaTag: new Uint8Array(buf.subarray(17, 25)),
      sameClient: timingSafeEqual(this.clientTag(client), buf.subarray(25, 33)),
    };
  }

  /**
   * What a download is counted under: one client's download of one asset's bytes. Keyed with the secret, so the
   * stored value does not give the address away (IPv4 is small enough to hash exhaustively).
   */
  countKey(assetId: number, sha256: string, client: string): string {
    return createHmac("sha256", this.secret).update(`count\0${assetId}\0${sha256}\0${addressKey(client)}`).digest("hex");
  }

  private clientTag(client: string): Uint8Array {
    return createHmac("sha256", this.secret).update(`client\0${addressKey(client)}`).digest().subarray(0, 8);
  }

  private mac(payload: Uint8Array): Buffer {
    return createHmac("sha256", this.secret).update(payload).digest();
  }
}

/** The first 8 bytes of a hex SHA-256 ("" while unknown: zeros). */
function shaTagOf(sha256: string): Uint8Array {
  const tag = new Uint8Array(8);
  if (/^[0-9a-f]{64}$/.test(sha256)) tag.set(Buffer.from(sha256.slice(0, 16), "hex"));
  return tag;
}

function isUnknownTag(tag: Uint8Array): boolean {
  return tag.every((b) => b === 0);
}

export type TokenReason = "unknown" | "expired" | "changed" | "elsewhere";

export type TokenVerdict = { ok: true } | { ok: false; status: 404 | 410; reason: TokenReason };

/**
 * The rule of use, given the verified claims (or null), the asset's current digest (null: no such asset), and
 * the clock. Unknown, forged or malformed tokens are 404; authentic ones that can no longer be used are 410 Gone.
 */
export function judgeToken(claims: TokenClaims | null, currentSha256: string | null, now: number): TokenVerdict {
  if (!claims || currentSha256 === null) return { ok: false, status: 404, reason: "unknown" };
  if (now >= claims.expiresAt) return { ok: false, status: 410, reason: "expired" };
  // New bytes behind the asset since the link was made: the client asked for the old ones. A link made while the
  // digest was unknown (a proxied asset before its first complete pass) holds whatever digest is learnt since.
  if (!isUnknownTag(claims.shaTag) && !timingSafeEqual(claims.shaTag, shaTagOf(currentSha256))) return { ok: false, status: 410, reason: "changed" };
  if (!claims.sameClient) return { ok: false, status: 410, reason: "elsewhere" };
  return { ok: true };
}

export const TOKEN_REASON_TEXT: Record<TokenReason, string> = {
  unknown: "No such download link.",
  expired: "This download link has expired; request the download again from /api/v1/download/{assetId}.",
  changed: "The file behind this download link has changed; request the download again from /api/v1/download/{assetId}.",
  elsewhere: "This download link was issued to another client; request the download again from /api/v1/download/{assetId}.",
};
