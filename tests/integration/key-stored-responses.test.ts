/**
 * What a key keeps, where an operator looks at the key: two keys, responses stored for one of them through
 * POST /v1/responses (store: true, a fake upstream), and the key's count and bytes in
 * GET /admin/api/keys/ID/usage and in `gantry keys usage` (a separate process on the same database, as an
 * operator runs it); the other key keeps nothing, and DELETE /v1/responses/{id} takes its share away.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatBytes } from "../../src/site/releases/sync-progress";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";

const ROOT = join(import.meta.dir, "..", "..");

let upstream: FakeUpstream;
let g: Gantry;
let dir: string;
let keeper: string;
const ids: string[] = [];

/** `gantry ARGS --data-dir DIR` without any GANTRY_* setting leaking in from the environment. */
function gantry(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([process.execPath, "src/main.ts", ...args, "--data-dir", dir], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

async function usage(name: string) {
  const res = await g.admin(`/admin/api/keys/${name}/usage?days=1`);
  expect(res.status).toBe(200);
  return (await res.json()) as { storedResponses: { responses: number; bytes: number } };
}

/** The bytes the database holds for a key, read beside the repository (what the figure must match). */
async function bytesKept(name: string): Promise<number> {
  const key = (await g.deps.keys.get(name))!;
  const [row] = await g.query("SELECT COALESCE(sum(bytes), 0) AS b FROM stored_responses WHERE key_id = $1", key.id);
  return Number(row!.b);
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), "gantry-key-stored-"));
  // A database file (not :memory:), so the CLI in its own process reads what the server wrote.
  g = await startGantry({ config: { dataDir: dir, upstreamUrl: upstream.url }, databasePath: join(dir, "gantry.db") });
  keeper = await g.createKey({ name: "keeper" });
  await g.createKey({ name: "idle" });
  for (const input of ["first question", "a second, longer question to keep"]) {
    const res = await fetch(`${g.url}/v1/responses`, authed(keeper, { model: "gpt-test", input, store: true }));
    expect(res.status).toBe(200);
    ids.push((await res.json()).id);
  }
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
  // After the server closed its database, not before.
  rmSync(dir, { recursive: true, force: true });
});

describe("stored responses per key", () => {
  test("the admin API's usage report gives the key's count and bytes; the other key's are zero", async () => {
    const kept = (await usage("keeper")).storedResponses;
    expect(kept).toEqual({ responses: 2, bytes: await bytesKept("keeper") });
    expect(kept.bytes).toBeGreaterThan(0);
    expect((await usage("idle")).storedResponses).toEqual({ responses: 0, bytes: 0 });
  });

  test("`gantry keys usage` prints them, and its --json is the admin API's answer", async () => {
    const kept = (await usage("keeper")).storedResponses;
    const text = gantry("keys", "usage", "keeper", "--days", "1");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Stored responses: 2 responses, ${formatBytes(kept.bytes)}\n`);
    expect(gantry("keys", "usage", "idle", "--days", "1").stdout).toContain("Stored responses: 0 responses, 0 B\n");
    const json = gantry("keys", "usage", "keeper", "--days", "1", "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await (await g.admin("/admin/api/keys/keeper/usage?days=1")).json());
  });

  test("DELETE /v1/responses/{id} takes the response out of the key's figure, in the API and the CLI", async () => {
    const before = (await usage("keeper")).storedResponses;
    const res = await fetch(`${g.url}/v1/responses/${ids[0]}`, { method: "DELETE", headers: { authorization: `Bearer ${keeper}` } });
    expect(res.status).toBe(200);
    const after = (await usage("keeper")).storedResponses;
    expect(after).toEqual({ responses: 1, bytes: await bytesKept("keeper") });
    expect(after.bytes).toBeLessThan(before.bytes);
    expect(gantry("keys", "usage", "keeper", "--days", "1").stdout).toContain(`Stored responses: 1 response, ${formatBytes(after.bytes)}\n`);
    expect((await usage("idle")).storedResponses).toEqual({ responses: 0, bytes: 0 });
  });
});
