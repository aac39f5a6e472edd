/**
 * The back office's CSRF check: a state-changing request carries its session's synchronizer token, compared in
 * constant time (through SHA-256, so lengths do not leak either).
 */
import { hashesEqual, sha256Hex } from "../secrets";

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfMatches(session: { csrf: string }, presented: string | null): boolean {
  if (!presented || presented.length > 100) return false;
  return hashesEqual(sha256Hex(presented), sha256Hex(session.csrf));
}
