/**
 * The command line against PostgreSQL (GANTRY_DATABASE_URL / --database-url), as an operator on another machine
 * runs it: a key created by `gantry keys create` works at once on a running server that shares the database,
 * disabling it acts within a second, and the SQLite-only maintenance commands refuse in words.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { defaultConfig } from "../../src/config";
import { createDeps, type AppDeps } from "../../src/deps";
import { silentLogger } from "../../src/log";
import { startServer, type RunningServer } from "../../src/server";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "..", "..");
const unavailable = postgresUnavailable();
const tempDir = tempDirs();

function gantry(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

if (unavailable) {
  console.warn(`PostgreSQL CLI tests skipped: ${unavailable}`);
  test.skip(`PostgreSQL CLI tests: ${unavailable}`, () => {});
} else {
  describe("gantry CLI on PostgreSQL", () => {
    let db: Awaited<ReturnType<typeof freshDatabase>>;
    let upstream: FakeUpstream;
    let deps: AppDeps;
    let running: RunningServer;
    // The CLI runs with a data dir of its own: nothing of the records may depend on it.
    let cliDir: string;

    beforeAll(async () => {
      db = await freshDatabase();
      upstream = await startFakeUpstream();
      cliDir = tempDir("pg-cli");
      deps = await createDeps(defaultConfig({ dataDir: tempDir("pg-server"), databaseUrl: db.url, upstreamUrl: upstream.url, upstreamKey: "upstream-secret-key", adminToken: "t" }), { log: silentLogger });
      running = startServer(deps, { hostname: "127.0.0.1", port: 0 });
    });
    afterAll(async () => {
      await running?.stop(1000);
      await upstream?.close();
      await db?.drop();
    });

    const models = (secret: string) => fetch(`${running.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } }).then(async (r) => (await r.arrayBuffer(), r.status));

    test("a key created by the CLI works on the server as soon as the command returns; disabling it acts within 1 s", async () => {
      const created = gantry("keys", "create", "--name", "from-cli", "--json", "--database-url", db.url, "--data-dir", cliDir);
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const { key } = JSON.parse(created.stdout) as { key: string };
      expect(await models(key)).toBe(200);

      const listed = gantry("keys", "list", "--json", "--database-url", db.url, "--data-dir", cliDir);
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((k) => k.name)).toContain("from-cli");

      expect(gantry("keys", "disable", "from-cli", "--database-url", db.url, "--data-dir", cliDir).code).toBe(0);
      const refused = await pollUntil(() => models(key), (s) => s === 403, { what: "the disabled key refused" });
      expect(refused.elapsedMs).toBeLessThan(1000);
    });

    test("the URL's password never appears in what the CLI prints", () => {
      const url = db.url.replace("postgres@", "postgres:hunter2-secret@");
      const out = gantry("keys", "list", "--database-url", url, "--data-dir", cliDir);
      expect(out.stdout + out.stderr).not.toContain("hunter2-secret");
    });

    test("backup and restore say they handle SQLite only, and point to pg_dump", () => {
      for (const cmd of ["backup", "restore"]) {
        const out = gantry(cmd, join(cliDir, "snap.db"), "--database-url", db.url, "--data-dir", cliDir);
        expect(out.code).not.toBe(0);
        expect(out.stderr).toContain("pg_dump");
        expect(out.stderr.trim().split("\n")).toHaveLength(1);
      }
    });
  });
}
