/**
 * Online statistics: the OPERATOR.md JSON shape via GET /admin/api/stats/clients and `gantry stats clients
 * --json` (a separate process on the server's database file), and the per-minute online series with its sampler.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";

const ROOT = join(import.meta.dir, "..", "..");

function stats(dataDir: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([process.execPath, "src/main.ts", "stats", ...args, "--data-dir", dataDir], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function beat(g: Gantry, id: string, body: Record<string, string>) {
  return fetch(`${g.url}/api/v1/client/heartbeat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-client-id": id },
    body: JSON.stringify(body),
  });
}

const FLEET: Array<[string, Record<string, string>]> = [
  ["a", { app: "myapp", version: "1.2.0", platform: "windows", arch: "x64", runtime: "electron", locale: "zh-CN" }],
  ["b", { app: "myapp", version: "1.2.0", platform: "macos", arch: "arm64", runtime: "electron", locale: "en-US" }],
  ["c", { app: "myapp", version: "1.1.0", platform: "windows", arch: "x64", runtime: "tauri", locale: "zh-CN" }],
  ["d", { app: "myapp-web", version: "1.2.0", platform: "web", runtime: "web" }],
];

describe("stats JSON via the admin API and the CLI (same database file, real clock)", () => {
  let dir: string;
  let g: Gantry;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gantry-stats-"));
    g = await startGantry({ config: { dataDir: dir }, databasePath: join(dir, "gantry.db") });
    for (const [id, body] of FLEET) expect((await beat(g, id, body)).status).toBe(200);
    // A duplicate report must not count twice.
    expect((await beat(g, "a", FLEET[0][1])).status).toBe(200);
  });
  afterAll(async () => {
    await g.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const expected = {
    online: 4,
    windowSeconds: 300,
    byVersion: { "1.2.0": 3, "1.1.0": 1 },
    byPlatform: { windows: 2, macos: 1, web: 1 },
    byRuntime: { electron: 2, tauri: 1, web: 1 },
    byApp: { myapp: 3, "myapp-web": 1 },
    byArch: { x64: 2, arm64: 1, unknown: 1 },
    byLocale: { "zh-CN": 2, "en-US": 1, unknown: 1 },
    knownClients: 4,
    generatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
  };

  test("GET /admin/api/stats/clients", async () => {
    const res = await g.admin("/admin/api/stats/clients");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(expected);
  });
  test("GET /admin/api/stats/clients needs the admin token", async () => {
    expect((await fetch(`${g.url}/admin/api/stats/clients`)).status).toBe(401);
    expect((await fetch(`${g.url}/admin/api/stats/clients/series`)).status).toBe(401);
  });
  test("gantry stats clients --json prints the same object", () => {
    const r = stats(dir, "clients", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });
  test("gantry stats clients prints a readable summary", () => {
    const r = stats(dir, "clients");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("online: 4");
    expect(r.stdout).toMatch(/1\.2\.0\s+3\s+75\.0%/);
  });
  test("series: the sample taken by the server is seen by the admin API and the CLI", async () => {
    await g.deps.engagement.stats.sample();
    const api = await (await g.admin("/admin/api/stats/clients/series?minutes=5")).json();
    expect(api.stepSeconds).toBe(60);
    expect(api.points).toHaveLength(5);
    expect(api.points.some((p: any) => p.online === 4)).toBe(true);
    const r = stats(dir, "series", "--minutes", "5", "--json");
    expect(r.code).toBe(0);
    const cli = JSON.parse(r.stdout);
    expect(cli.points.some((p: any) => p.online === 4)).toBe(true);
  });
  test("bad input: exit 2 from the CLI, 400 from the API", async () => {
    expect(stats(dir, "series", "--step", "30").code).toBe(2);
    expect(stats(dir, "visitors").code).toBe(2);
    const res = await g.admin("/admin/api/stats/clients/series?minutes=99999");
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe("minutes");
  });
});

describe("per-minute online series (injected time)", () => {
  const T0 = Date.parse("2025-06-15T12:00:00.000Z");
  const MIN = 60_000;
  // Started 10 minutes earlier, so the sample taken by start() is in another minute than the test's.
  let clock = T0 - 10 * MIN;
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry({ now: () => clock });
  });
  afterAll(async () => {
    await g.stop();
  });

  test("the sampler records one peak value per minute; the series shows gaps as null", async () => {
    const stats = g.deps.engagement.stats;
    await g.deps.engagement.clients.pruneSeries(Number.MAX_SAFE_INTEGER);
    clock = T0 + 5_000;
    await beat(g, "x1", {});
    await stats.tick(); // 12:00 -> 1
    clock = T0 + 20_000;
    await beat(g, "x2", {});
    await stats.tick(); // same minute: no new sample from the timer
    clock = T0 + MIN + 1_000;
    await stats.tick(); // 12:01 -> 2
    clock = T0 + 3 * MIN + 1_000;
    await stats.tick(); // 12:03 -> 2 (12:02 missed: server "down")

    const s = await (await g.admin("/admin/api/stats/clients/series?minutes=4")).json();
    expect(s).toEqual({
      windowSeconds: 300,
      stepSeconds: 60,
      from: "2025-06-15T12:00:00.000Z",
      to: "2025-06-15T12:04:00.000Z",
      points: [
        { t: "2025-06-15T12:00:00.000Z", online: 1 },
        { t: "2025-06-15T12:01:00.000Z", online: 2 },
        { t: "2025-06-15T12:02:00.000Z", online: null },
        { t: "2025-06-15T12:03:00.000Z", online: 2 },
      ],
    });
  });
  test("an explicit sample in the same minute keeps the peak", async () => {
    clock = T0 + 3 * MIN + 30_000;
    await beat(g, "x3", {});
    await g.deps.engagement.stats.sample();
    const s = await (await g.admin("/admin/api/stats/clients/series?minutes=1")).json();
    expect(s.points).toEqual([{ t: "2025-06-15T12:03:00.000Z", online: 3 }]);
  });
  test("coarser steps show the peak of each bucket", async () => {
    const s = await (await g.admin("/admin/api/stats/clients/series?minutes=10&step=300")).json();
    expect(s.stepSeconds).toBe(300);
    expect(s.points).toEqual([
      { t: "2025-06-15T11:55:00.000Z", online: null },
      { t: "2025-06-15T12:00:00.000Z", online: 3 },
    ]);
  });
  test("samples older than 30 days and clients silent for 90 days are pruned", async () => {
    const { clients } = g.deps.engagement;
    const samples = async () => (await clients.samples(0, Number.MAX_SAFE_INTEGER)).length;
    expect(await samples()).toBe(3);
    clock = T0 + 30 * 86_400_000 + 2 * MIN; // 12:00 and 12:01 are now older than 30 days; 12:03 is not
    await g.deps.engagement.stats.prune();
    expect(await samples()).toBe(1);
    expect(await clients.knownCount()).toBe(3);
    clock = T0 + 91 * 86_400_000;
    await g.deps.engagement.stats.prune();
    expect(await clients.knownCount()).toBe(0);
    expect(await samples()).toBe(0);
  });
});
