/**
 * Start-up errors name the part and the reason, never the URL's credentials: the PostgreSQL driver's codes in
 * words (a wrong password among them, which the loopback test server, trusting every connection, cannot show),
 * addresses from URLs, and runtime console lines as log lines.
 */
import { describe, expect, test } from "bun:test";
import { postgresAddress, postgresConnectError } from "../../src/store/postgres/connect-errors";
import { redisAddress } from "../../src/store/redis/connect-errors";
import { consoleLine } from "../../src/console-to-log";
import { createLogger } from "../../src/log";

const URL_WITH_PASSWORD = "postgres://gantry:hunter2-secret@db.internal:6432/gantry";

describe("PostgreSQL start-up errors", () => {
  test("the address is host and port, 5432 when the URL names none, never the credentials", () => {
    expect(postgresAddress(URL_WITH_PASSWORD)).toBe("db.internal:6432");
    expect(postgresAddress("postgres://u:p@db.internal/gantry")).toBe("db.internal:5432");
    expect(postgresAddress("postgresql://u:p@[::1]:5433/x")).toBe("[::1]:5433");
    expect(postgresAddress("not a url")).toBe("the configured address");
  });

  test("each failure in words, naming the server", () => {
    const say = (err: unknown) => postgresConnectError(URL_WITH_PASSWORD, err, 10).message;
    expect(say({ code: "ERR_POSTGRES_CONNECTION_REFUSED", message: "Failed to connect" })).toStartWith("PostgreSQL at db.internal:6432: connection refused");
    expect(say({ code: "ERR_POSTGRES_CONNECTION_TIMEOUT", message: "Connection timeout after 10s" })).toStartWith("PostgreSQL at db.internal:6432: no answer within 10 s");
    expect(say({ errno: "28P01", message: 'password authentication failed for user "gantry"' })).toBe(
      'PostgreSQL at db.internal:6432: authentication failed (password authentication failed for user "gantry")',
    );
    expect(say({ errno: "3D000", message: 'database "gantry" does not exist' })).toContain("create it first");
    expect(say(new Error("something else"))).toBe("PostgreSQL at db.internal:6432: something else");
    for (const m of [say({ code: "ERR_POSTGRES_CONNECTION_REFUSED" }), say({ errno: "28P01", message: "x" })]) expect(m).not.toContain("hunter2");
  });
});

describe("Redis start-up errors", () => {
  test("the address is host and port, 6379 when the URL names none, never the credentials", () => {
    expect(redisAddress("redis://:hunter2@cache.internal:6380")).toBe("cache.internal:6380");
    expect(redisAddress("rediss://user:hunter2@cache.internal")).toBe("cache.internal:6379");
  });
});

describe("console lines of the runtime", () => {
  const logged = () => {
    const lines: string[] = [];
    return { log: createLogger("debug", (l) => lines.push(l), false), lines: () => lines.map((l) => JSON.parse(l)) };
  };

  test("bun:sql's LISTEN retry becomes a warning with its channel and error", () => {
    const { log, lines } = logged();
    consoleLine(log, "warn", ['bun:sql LISTEN "gantry_changes" failed, retrying: Failed to connect']);
    expect(lines()).toEqual([
      expect.objectContaining({ level: "warn", msg: expect.stringContaining("PostgreSQL change listener"), channel: "gantry_changes", error: "Failed to connect" }),
    ]);
  });

  test("any other line keeps its text, formatted as console would", () => {
    const { log, lines } = logged();
    consoleLine(log, "error", ["%s went %d times", "it", 3]);
    expect(lines()).toEqual([expect.objectContaining({ level: "error", msg: "runtime message", text: "it went 3 times" })]);
  });
});
