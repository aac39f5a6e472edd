/**
 * Lines Bun's drivers print themselves reach the JSON log as log lines (issue 30): with PostgreSQL gone, bun:sql
 * re-subscribes the change feed's LISTEN and says so with console.warn ("bun:sql LISTEN … failed, retrying:
 * Failed to connect"); a server's output stays one JSON object per line.
 */
import { expect, test } from "bun:test";
import { startServe } from "./serve-process";
import { pollUntil } from "../support/poll";
import { postgresUnavailable, startPostgresServer } from "../support/postgres";
import { tempDirs } from "../support/temp-dirs";

const unavailable = postgresUnavailable();
const tempDir = tempDirs();

if (unavailable) {
  test.skip(`driver lines: ${unavailable}`, () => {});
} else {
  test("PostgreSQL gone: the change listener's retries are JSON log lines, and nothing else is written", async () => {
    const pg = await startPostgresServer();
    let stopped = false;
    const server = await startServe({
      dataDir: tempDir("driver-lines"),
      upstreamUrl: "http://127.0.0.1:9/v1",
      env: { GANTRY_DATABASE_URL: await pg.createDatabase(), GANTRY_ADMIN_TOKEN: "gat-driver-lines-admin-token-0000000001" },
    });
    try {
      await pg.stop();
      stopped = true;
      const listener = (line: string) => line.includes("PostgreSQL change listener lost its connection");
      await pollUntil(() => server.output(), (out) => out.split("\n").some(listener), { timeoutMs: 30_000, stepMs: 50, what: "the listener's retry in the log" });
      const lines = server.output().split("\n").filter((l) => l.trim() !== "");
      const notJson = lines.filter((l) => {
        try {
          return typeof JSON.parse(l) !== "object";
        } catch {
          return true;
        }
      });
      expect(notJson).toEqual([]);
      const retry = lines.map((l) => JSON.parse(l)).find((l) => listener(l.msg));
      expect(retry).toMatchObject({ level: "warn", channel: "gantry_changes" });
      expect(typeof retry.error).toBe("string");
    } finally {
      server.kill("SIGKILL");
      await server.exited;
      if (!stopped) await pg.stop();
    }
  }, 90_000);
}
