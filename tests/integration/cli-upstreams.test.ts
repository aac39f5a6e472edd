/**
 * `gantry upstreams` against a real `gantry serve` process: the command reads the operator file the server wrote in
 * its data dir (owner-only) and asks the server's admin API; list (text and --json), test, disable, enable, an
 * unknown name, and a data dir without a running server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  return env;
}

/** Runs `gantry ARGS` as its own process (not spawnSync: the fake upstream in this process must keep answering). */
async function gantry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([BUN, "src/main.ts", ...args], { cwd: ROOT, env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

describe("gantry upstreams", () => {
  let upstream: FakeUpstream;
  let dir: string;
  let server: ReturnType<typeof Bun.spawn>;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ apiKey: "cli-upstream-secret" });
    dir = mkdtempSync(join(tmpdir(), "gantry-cli-upstreams-"));
    const port = await freePort();
    server = Bun.spawn(
      [BUN, "src/main.ts", "serve", "--port", String(port), "--data-dir", dir, "--admin-token", "gat-cli-upstreams-token-000000", "--upstream-url", upstream.url, "--upstream-key", "cli-upstream-secret"],
      { cwd: ROOT, env: cleanEnv(), stdout: "ignore", stderr: "ignore" },
    );
    await pollUntil(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), Boolean, { timeoutMs: 15_000, stepMs: 50, what: "the server to answer" });
    await pollUntil(() => existsSync(join(dir, "operator.json")), Boolean, { what: "the operator file" });
  });
  afterAll(async () => {
    server?.kill("SIGTERM");
    await server?.exited;
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the operator file is the owner's alone", () => {
    expect(statSync(join(dir, "operator.json")).mode & 0o777).toBe(0o600);
  });

  test("list shows name, state, until, reason, inFlight and counters; --json the accounts of the admin API", async () => {
    const text = await gantry("upstreams", "list", "--data-dir", dir);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/\s+/)).toEqual(["NAME", "STATE", "UNTIL", "REASON", "INFLIGHT", "COUNTERS"]);
    expect(lines[1]!.split(/\s+/)).toEqual(["default", "healthy", "-", "-", "0", "requests=0", "failures=0", "failovers=0", "cooldowns=0"]);
    const json = await gantry("upstreams", "list", "--json", "--data-dir", dir);
    expect(json.code).toBe(0);
    const accounts = JSON.parse(json.stdout);
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ name: "default", state: "healthy", until: null, reason: null, inFlight: 0, counters: { requests: 0, failures: {}, failovers: 0, cooldowns: 0 } });
    expect(json.stdout).not.toContain("cli-upstream-secret");
  });

  test("test sends the account a model-list request and says what came back", async () => {
    const before = upstream.requests.length;
    const r = await gantry("upstreams", "test", "default", "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^default: ok \(200\) in \d+ ms: the model list answered with 3 models\n$/);
    expect(upstream.requests.slice(before).map((q) => `${q.method} ${q.path}`)).toEqual(["GET /v1/models"]);
  });

  test("disable and enable change the server's state (the next list shows it)", async () => {
    const off = await gantry("upstreams", "disable", "default", "--data-dir", dir);
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("disabled by an operator");
    const list = JSON.parse((await gantry("upstreams", "list", "--json", "--data-dir", dir)).stdout);
    expect(list[0]).toMatchObject({ state: "disabled", reason: "disabled by an operator" });
    const on = await gantry("upstreams", "enable", "default", "--json", "--data-dir", dir);
    expect(JSON.parse(on.stdout)).toMatchObject({ name: "default", state: "healthy", reason: null });
  });

  test("an unknown account, a missing name and a data dir without a server are one-line errors", async () => {
    const unknown = await gantry("upstreams", "disable", "nobody", "--data-dir", dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('gantry upstreams disable: no upstream account is named "nobody"\n');
    const missing = await gantry("upstreams", "test", "--data-dir", dir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("needs an account name");
    const empty = mkdtempSync(join(tmpdir(), "gantry-cli-upstreams-none-"));
    try {
      const none = await gantry("upstreams", "list", "--data-dir", empty);
      expect(none.code).toBe(1);
      expect(none.stderr).toBe(`gantry upstreams list: no running server for the data dir ${empty} (start gantry serve, or pass its --data-dir)\n`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test("a server that stops removes its operator file", async () => {
    server.kill("SIGTERM");
    await server.exited;
    expect(existsSync(join(dir, "operator.json"))).toBe(false);
  });
});
