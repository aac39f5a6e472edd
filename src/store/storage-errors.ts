/**
 * Errors that say the store cannot take a write right now, whatever the backend: the disk is full or failing, the
 * database went away. A request that meets one gets a 503 with Retry-After and the error envelope - the operator's
 * problem, not the caller's, and not an internal error: nothing is lost by retrying once it is fixed.
 */
import { AppError, isAppError } from "../errors";
import { isConnectionLoss, isServerUnreachable } from "./postgres/db";

/** SQLite result codes (bun:sqlite's `code`) of a store that cannot write. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR(_\w+)?|READONLY(_\w+)?|CANTOPEN|BUSY|LOCKED)$/;
/** File-system errors of the same kind (mirrors, uploads, backups). */
const FS_UNAVAILABLE = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);

export function isStorageUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown } | null;
  if (!e || typeof e !== "object") return false;
  if (typeof e.code === "string" && (SQLITE_UNAVAILABLE.test(e.code) || FS_UNAVAILABLE.has(e.code))) return true;
  // PostgreSQL: class 53 (insufficient resources: disk full, out of memory, too many connections), 58 (system
  // error: I/O), a lost connection, and a server that cannot be reached (stopped or restarting).
  if (typeof e.errno === "string" && /^5[38]/.test(e.errno)) return true;
  return isConnectionLoss(err) || isServerUnreachable(err);
}

export function storageUnavailable(): AppError {
  return new AppError("service_unavailable", "The server's storage cannot take this change right now; retry shortly.", {
    headers: { "retry-after": "5" },
  });
}

/**
 * What a caller is told of an error as it is: an AppError itself, a store that cannot write as 503; null for
 * anything else, which is an internal error (logged by whoever renders it).
 */
export function knownError(err: unknown): AppError | null {
  return isAppError(err) ? err : isStorageUnavailable(err) ? storageUnavailable() : null;
}
