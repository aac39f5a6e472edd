/**
 * SQLite's side of the storage-error seam (state/storage-errors.ts): the result codes (bun:sqlite's `code`) of a
 * database that cannot write now - full, failing, read-only, unopenable, busy or locked. Registered as this
 * module loads; db.ts, which every SQLite repository's database comes from, imports it.
 */
import { classifyStorageErrors } from "../../state/storage-errors";

const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR(_\w+)?|READONLY(_\w+)?|CANTOPEN|BUSY|LOCKED)$/;

export function isSqliteUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && SQLITE_UNAVAILABLE.test(code);
}

classifyStorageErrors(isSqliteUnavailable);
