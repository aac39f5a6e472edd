import { describe, expect, test } from "bun:test";
import { isStorageUnavailable, knownError } from "../../src/state/storage-errors";
import { isSqliteUnavailable } from "../../src/store/sqlite/storage-errors";
import { isPostgresUnavailable } from "../../src/store/postgres/storage-errors";

describe("storage errors: each backend classifies its own", () => {
  test("SQLite: a database that cannot write, and nothing else", () => {
    for (const code of ["SQLITE_FULL", "SQLITE_IOERR", "SQLITE_IOERR_WRITE", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_BUSY", "SQLITE_LOCKED"]) {
      expect(isSqliteUnavailable({ code })).toBe(true);
      expect(isStorageUnavailable({ code })).toBe(true);
    }
    for (const code of ["SQLITE_CONSTRAINT", "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_ERROR"]) expect(isStorageUnavailable({ code })).toBe(false);
  });

  test("PostgreSQL: resources, I/O, lost connections and an unreachable server", () => {
    for (const err of [{ errno: "53100" }, { errno: "58030" }, { errno: "57P01" }, { errno: "08006" }, { code: "ERR_POSTGRES_CONNECTION_CLOSED" }, { code: "ERR_POSTGRES_CONNECTION_REFUSED" }]) {
      expect(isPostgresUnavailable(err)).toBe(true);
      expect(isStorageUnavailable(err)).toBe(true);
    }
    for (const err of [{ errno: "23505" }, { errno: "42601" }, { code: "ERR_POSTGRES_SYNTAX_ERROR" }]) expect(isStorageUnavailable(err)).toBe(false);
  });

  test("the file system's errors, whatever the backend; anything else is not the storage's", () => {
    for (const code of ["ENOSPC", "EDQUOT", "EROFS", "EIO"]) expect(isStorageUnavailable({ code })).toBe(true);
    for (const err of [null, undefined, "SQLITE_FULL", 53, new Error("boom"), { code: "ENOENT" }]) expect(isStorageUnavailable(err)).toBe(false);
  });

  test("a storage error becomes a 503 with Retry-After; others are left to the caller", () => {
    const e = knownError({ code: "SQLITE_FULL" });
    expect(e?.status).toBe(503);
    expect(e?.headers?.["retry-after"]).toBe("5");
    expect(knownError(new Error("boom"))).toBeNull();
  });
});
