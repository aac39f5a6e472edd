/**
 * A start that cannot reach PostgreSQL or Redis says which part failed, where, and why (issue 30):
 * "PostgreSQL at HOST:PORT: connection refused", "Redis at HOST:PORT: authentication failed (WRONGPASS …)"
 * instead of the driver's "failed to connect" and "connection closed"; a server that takes the connection and
 * never answers fails within the connect timeout (10 s for PostgreSQL, 2 s for Redis), once; the failure is in
 * the JSON log too, no other line is written, and no password appears.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { freePort, refusedStart, type Refusal } from "./serve-process";
import { redisUnavailable } from "../support/redis";
import { tempDirs } from "../support/temp-dirs";

const PASSWORD = "startup-secret-pw-0123";

/** A port nothing listens on (bound and released a moment ago). */
function closedPort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}


const tempDir = tempDirs();

/** `gantry serve` with these settings, which must fail to start. */
function failedStart(env: Record<string, string>): Promise<Refusal> {
  return refusedStart(tempDir("startup"), env);
}

/** Every line written is a JSON log line, but the one-line reason on stderr; the password is in none of them. */
function expectOnlyLogLinesAndReason(r: Refusal, reason: string): void {
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toBe(`gantry serve: ${reason}`);
  const lines = r.stdout.split("\n").filter((l) => l.trim() !== "");
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  const failed = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "cannot start");
  expect(failed?.error).toBe(reason);
  expect(r.stdout + r.stderr).not.toContain(PASSWORD);
}

/** A server that takes connections and never answers (a stuck server, a port that swallows the handshake). */
function silentServer(): { port: number; stop(): void } {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, open() {} } });
  return { port: server.port, stop: () => server.stop(true) };
}

describe("PostgreSQL at start", () => {
  test("nothing listening: named, refused, at once", async () => {
    const port = closedPort();
    const r = await failedStart({ GANTRY_DATABASE_URL: `postgres://gantry:${PASSWORD}@127.0.0.1:${port}/gantry` });
    expectOnlyLogLinesAndReason(r, `PostgreSQL at 127.0.0.1:${port}: connection refused (is PostgreSQL running there, and listening on that address?)`);
  }, 90_000);

  test("a server that never answers: fails once, within the connect timeout", async () => {
    const silent = silentServer();
    try {
      const r = await failedStart({ GANTRY_DATABASE_URL: `postgres://gantry:${PASSWORD}@127.0.0.1:${silent.port}/gantry` });
      expectOnlyLogLinesAndReason(
        r,
        `PostgreSQL at 127.0.0.1:${silent.port}: no answer within 10 s (the address takes connections but PostgreSQL does not answer: a firewall, a wrong port, or a server that is stuck)`,
      );
      // One connect timeout (10 s) and the process's own start, with room for a loaded machine; before, each of the
      // pool's eleven tries waited its own 10 s.
      expect(r.ms).toBeGreaterThanOrEqual(10_000);
      expect(r.ms).toBeLessThan(40_000);
    } finally {
      silent.stop();
    }
  }, 90_000);
});

describe("Redis at start", () => {
  test("nothing listening: named, refused", async () => {
    const port = closedPort();
    const r = await failedStart({ GANTRY_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}` });
    expectOnlyLogLinesAndReason(r, `Redis at 127.0.0.1:${port}: connection refused (is Redis running there, and listening on that address?)`);
  }, 90_000);

  test("a server that never answers: no answer within the connect timeout", async () => {
    const silent = silentServer();
    try {
      const r = await failedStart({ GANTRY_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${silent.port}` });
      expectOnlyLogLinesAndReason(
        r,
        `Redis at 127.0.0.1:${silent.port}: no answer within 2 s (the address takes connections but Redis does not answer: a wrong port, or a server that is stuck)`,
      );
    } finally {
      silent.stop();
    }
  }, 90_000);

  const unavailable = redisUnavailable();
  if (unavailable) {
    test.skip(`Redis credentials: ${unavailable}`, () => {});
    return;
  }

  describe("credentials", () => {
    let redis: Subprocess;
    let port: number;

    beforeAll(async () => {
      // A server of its own that wants a password (the run's shared one has none).
      for (let attempt = 0; ; attempt++) {
        port = freePort();
        redis = Bun.spawn(["/usr/bin/redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tempDir("redis"), "--requirepass", "the-right-one"], {
          stdout: "pipe",
          stderr: "pipe",
        });
        let out = "";
        const decoder = new TextDecoder();
        for await (const chunk of redis.stdout as ReadableStream<Uint8Array>) {
          out += decoder.decode(chunk);
          if (out.includes("Ready to accept connections")) break;
        }
        if (out.includes("Ready to accept connections")) return;
        if (attempt >= 3) throw new Error(`redis-server did not start: ${out}`);
      }
    }, 30_000);

    afterAll(async () => {
      redis?.kill();
      await redis?.exited;
    });

    test("a wrong password is an authentication failure, not a network fault", async () => {
      const r = await failedStart({ GANTRY_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}` });
      expectOnlyLogLinesAndReason(r, `Redis at 127.0.0.1:${port}: authentication failed (WRONGPASS: check the user and password in GANTRY_REDIS_URL)`);
    }, 90_000);

    test("no password where one is wanted says so", async () => {
      const r = await failedStart({ GANTRY_REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`gantry serve: Redis at 127.0.0.1:${port}: authentication failed (NOAUTH`);
    }, 90_000);
  });
});
