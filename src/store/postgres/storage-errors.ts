/**
 * PostgreSQL's side of the storage-error seam (state/storage-errors.ts): class 53 (insufficient resources: disk
 * full, out of memory, too many connections), class 58 (system error: I/O), a lost connection, and a server that
 * cannot be reached (stopped or restarting). Registered as this module loads; db.ts, which opens every
 * PostgreSQL pool, imports it.
 */
import { classifyStorageErrors } from "../../state/storage-errors";

/**
 * A connection that broke under a statement: the server restarted or went away, or an idle pooled connection
 * found itself cut. Nothing else (a constraint, a syntax error) is retried.
 */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: string; errno?: string; message?: string } | null;
  if (!e) return false;
  if (typeof e.code === "string" && /^ERR_POSTGRES_(CONNECTION_CLOSED|CONNECTION_TIMEOUT|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/.test(e.code)) return true;
  // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 08xxx connection exceptions.
  return typeof e.errno === "string" && (/^57P0[123]$/.test(e.errno) || e.errno.startsWith("08"));
}

/**
 * The server cannot be reached at all (stopped, restarting, its address refusing connections): Bun's driver says
 * "Failed to connect". Not retried at once, as a lost connection is (the next try would be refused too); a request
 * that meets it is answered as storage that is unavailable (state/storage-errors.ts).
 */
export function isServerUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "ERR_POSTGRES_CONNECTION_REFUSED" || code === "ERR_POSTGRES_CONNECTION_FAILED";
}

export function isPostgresUnavailable(err: unknown): boolean {
  const errno = (err as { errno?: unknown } | null)?.errno;
  if (typeof errno === "string" && /^5[38]/.test(errno)) return true;
  return isConnectionLoss(err) || isServerUnreachable(err);
}

classifyStorageErrors(isPostgresUnavailable);
