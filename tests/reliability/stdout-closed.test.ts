/**
 * `gantry serve | head -1`, or a log collector that goes away: once nobody reads stdout, writes fail with EPIPE.
 * The server must keep serving, and must not print errors (with source lines) about its own log writes.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, ROOT, freePort } from "./serve-process";

test("a closed stdout costs the log lines, nothing else", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gantry-stdout-"));
  const port = freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const proc = Bun.spawn(
    [BUN, MAIN, "serve", "--data-dir", dir, "--port", String(port), "--upstream-url", "http://127.0.0.1:9", "--upstream-key", "k"],
    { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" },
  );
  try {
    // Wait for the first log line, then stop reading: the read end of the pipe closes.
    const reader = proc.stdout.getReader();
    await reader.read();
    await reader.cancel();
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 20; i++) {
      expect((await fetch(`${url}/api/v1/latest`)).status).toBe(200);
      await Bun.sleep(5); // a fixed time on purpose: lets log flushes (every 25 ms) hit the closed pipe between requests
    }
    // A fixed time on purpose: several flush timers (every 25 ms) fire on the closed pipe with nothing else going on.
    await Bun.sleep(100);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(proc.exitCode).toBeNull();
    proc.kill("SIGTERM");
    await proc.exited;
    expect(await new Response(proc.stderr).text()).toBe("");
  } finally {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
