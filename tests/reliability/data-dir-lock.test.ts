/**
 * One server per data dir, decided by a lock the operating system drops with its process: a second `gantry serve`
 * on the same directory is refused while the first runs (it used to start, take over the pid file and delete it
 * on exit, after which `restore` ran under the live server); `restore` is refused for as long as the server
 * lives; a server killed with SIGKILL leaves a pid file behind that blocks nothing. Real processes, real signals.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { BUN, MAIN, ROOT, freePort, runGantry, startServe, type ServeProcess } from "./serve-process";

const started: Array<{ kill(signal: NodeJS.Signals): void; exited: Promise<unknown> }> = [];
afterAll(async () => {
  for (const p of started) {
    p.kill("SIGKILL");
    await p.exited;
  }
});
// Registered after the hook above, so it runs after it: the servers are gone before their directories.
const tempDir = tempDirs();

async function serve(dataDir: string): Promise<ServeProcess> {
  const server = await startServe({ dataDir, upstreamUrl: "http://127.0.0.1:1/v1", adminToken: "gat-lock-test-token-0000000000" });
  started.push(server);
  return server;
}

/** A second `gantry serve` on `dataDir`: whether it ended (with its code and output) or came up and answered. */
async function secondServe(dataDir: string): Promise<{ outcome: "exited" | "serving"; code: number | null; output: string }> {
  const port = freePort();
  const proc = Bun.spawn([BUN, MAIN, "serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir, "--upstream-url", "http://127.0.0.1:1/v1"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  started.push(proc);
  let code: number | null = null;
  const exited = proc.exited.then((c) => (code = c));
  const serving = () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
  const { value } = await pollUntil(async () => (code !== null ? "exited" : (await serving()) ? "serving" : null), Boolean, {
    timeoutMs: 15_000,
    stepMs: 25,
    what: "the second server to exit or answer",
  });
  if (value === "serving") return { outcome: "serving", code: null, output: "" };
  await exited;
  const output = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
  return { outcome: "exited", code, output };
}

test("a second serve on a live server's data dir is refused; restore stays refused; SIGKILL leaves nothing that blocks", async () => {
  const dir = tempDir("lock");
  const first = await serve(dir);
  const snapshot = join(tempDir("lock-backup"), "snapshot.db");
  expect((await runGantry(["backup", snapshot, "--data-dir", dir])).code).toBe(0);

  const second = await secondServe(dir);
  expect(second.outcome).toBe("exited");
  expect(second.code).toBe(1);
  expect(second.output).toContain(`gantry (pid ${first.pid}) is using ${dir}`);
  expect(second.output).toContain("--data-dir");

  // The refused start changed nothing: the first server still answers, and the pid file still names it.
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  expect(readFileSync(join(dir, "gantry.pid"), "utf8").trim()).toBe(String(first.pid));
  const refused = await runGantry(["restore", snapshot, "--data-dir", dir]);
  expect(refused.code).toBe(1);
  expect(refused.err).toContain(`gantry (pid ${first.pid}) is using ${dir}: stop it before restoring`);

  // Killed outright: its pid file stays behind, but the lock went with the process.
  first.kill("SIGKILL");
  await first.exited;
  expect(readFileSync(join(dir, "gantry.pid"), "utf8").trim()).toBe(String(first.pid));
  const next = await serve(dir);
  expect(readFileSync(join(dir, "gantry.pid"), "utf8").trim()).toBe(String(next.pid));
  next.kill("SIGTERM");
  expect(await next.exited).toBe(0);
  expect(existsSync(join(dir, "gantry.pid"))).toBe(false);

  // Once no server runs, restore goes ahead.
  const restored = await runGantry(["restore", snapshot, "--data-dir", dir]);
  expect(restored.err).toBe("");
  expect(restored.code).toBe(0);
}, 60_000);

test("deleting the files beside the database does not let a second serve start under a live server", async () => {
  const dir = tempDir("lock-deleted");
  const first = await serve(dir);
  // What an operator might take for stale: everything but the database and the mirror (the lock used to be the
  // file gantry.lock; deleted, the next server made a new one, locked it and ran beside the first).
  const deleted = readdirSync(dir).filter((name) => !name.startsWith("gantry.db") && name !== "mirror");
  for (const name of deleted) rmSync(join(dir, name), { force: true });
  expect(deleted).toContain("gantry.pid");

  const second = await secondServe(dir);
  expect(second.outcome).toBe("exited");
  expect(second.code).toBe(1);
  expect(second.output).toContain(`is using ${dir}`);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  first.kill("SIGTERM");
  expect(await first.exited).toBe(0);
}, 60_000);
