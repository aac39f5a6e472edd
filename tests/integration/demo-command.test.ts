/**
 * `gantry demo` as a newcomer runs it: what it prints works (the landing page, a printed CLI command against
 * the running demo's data, on a PATH without bun), and it removes its temporary data dir however it stops;
 * with --data-dir the data is kept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const START_TIMEOUT_MS = 30_000;

/** The environment without GANTRY_* settings (the demo must not pick up a developer's real ones). */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  return { ...env, ...extra };
}

/** PATH without any directory that holds a `bun`: a machine with only Node.js and npm. */
function pathWithoutBun(): string {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && !existsSync(join(dir, "bun")))
    .join(delimiter);
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

interface Demo {
  proc: ReturnType<typeof Bun.spawn>;
  out: string;
  base: string;
  dataDir: string;
}

/** Starts the demo and reads its stdout until the printout is complete (or the process ends first). */
async function startDemo(tmp: string, args: string[] = [], logLevel = "warn"): Promise<Demo> {
  const proc = Bun.spawn([BUN, "src/main.ts", "demo", "--port", String(await freePort()), "--log-level", logLevel, ...args], {
    cwd: ROOT,
    env: cleanEnv({ TMPDIR: tmp }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!out.includes("Stop with Ctrl-C.")) {
    // A deadline, not a wait: a demo that never finishes its printout fails here instead of hanging the test.
    const chunk = await Promise.race([reader.read(), Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null)]);
    if (chunk === null) throw new Error(`the demo printed no complete printout within ${START_TIMEOUT_MS} ms:\n${out}`);
    if (chunk.done) throw new Error(`the demo ended (code ${await proc.exited}) before its printout was complete:\n${out}`);
    out += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  const base = /Gantry demo is running at (\S+)/.exec(out)![1];
  const dataDir = /Data dir:\s+(\S+)/.exec(out)![1];
  return { proc, out, base, dataDir };
}

async function stop(demo: Demo, signal: NodeJS.Signals): Promise<number> {
  demo.proc.kill(signal);
  return await demo.proc.exited;
}

function ledgerRows(dataDir: string): number {
  const db = new Database(join(dataDir, "gantry.db"), { readonly: true });
  try {
    return (db.query("SELECT COUNT(*) AS n FROM usage_ledger").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const leftovers = (tmp: string) => readdirSync(tmp).filter((name) => name.startsWith("gantry-demo-"));

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "gantry-demo-test-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("gantry demo", () => {
  test(
    "its printout works as shown, and Ctrl-C removes its temporary data dir",
    async () => {
      const demo = await startDemo(tmp);
      try {
        expect(demo.dataDir.startsWith(tmp)).toBe(true);
        expect(existsSync(join(demo.dataDir, "gantry.db"))).toBe(true);
        expect(demo.out).toContain("temporary: removed when the demo stops");

        // The first page a browser gets is the landing page, not a JSON 404.
        const landing = await fetch(`${demo.base}/`);
        expect(landing.status).toBe(200);
        expect(await landing.text()).toContain('href="/admin"');

        // The printed Anthropic Messages line, run as printed by curl: a Claude model name is answered by the demo model.
        const messagesLine = /\n\s+(curl \S+\/v1\/messages .+\\\n.+)\n/.exec(demo.out);
        expect(messagesLine).not.toBeNull();
        const curl = Bun.spawnSync(["sh", "-c", messagesLine![1]!], { stdout: "pipe", stderr: "pipe" });
        const message = JSON.parse(curl.stdout.toString());
        expect(message).toMatchObject({ type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_reason: "end_turn" });
        expect(message.content[0].text).toContain("Gantry demo model");
        expect(demo.out).toContain(`ANTHROPIC_API_KEY=`);

        // A printed CLI command, exactly as printed, in the printed directory, on a PATH without bun,
        // while the demo runs: it sees the demo's keys.
        const hint = /Command line, against this demo's data \(from another terminal, in (.+)\):\n\s+(.+ keys list .+)/.exec(demo.out);
        expect(hint).not.toBeNull();
        const [, cwd, command] = hint!;
        expect(command).toBe(`npm run gantry -- keys list --data-dir ${demo.dataDir}`);
        const run = Bun.spawnSync(["sh", "-c", command], { cwd, env: cleanEnv({ PATH: pathWithoutBun() }), stdout: "pipe", stderr: "pipe" });
        expect({ code: run.exitCode, stderr: run.exitCode === 0 ? "" : run.stderr.toString() }).toEqual({ code: 0, stderr: "" });
        const listing = run.stdout.toString();
        for (const name of ["demo", "mobile-app", "nightly-batch"]) expect(listing).toContain(name);
      } finally {
        expect(await stop(demo, "SIGINT")).toBe(0);
      }
      expect(existsSync(demo.dataDir)).toBe(false);
      expect(leftovers(tmp)).toEqual([]);
    },
    START_TIMEOUT_MS * 2,
  );

  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    test(
      `${signal} stops it and removes its temporary data dir`,
      async () => {
        const demo = await startDemo(tmp);
        expect(existsSync(demo.dataDir)).toBe(true);
        expect(await stop(demo, signal)).toBe(0);
        expect(existsSync(demo.dataDir)).toBe(false);
        expect(leftovers(tmp)).toEqual([]);
      },
      START_TIMEOUT_MS * 2,
    );
  }

  test(
    "its log is short text lines, all before the printout, which ends the output; JSON when asked for",
    async () => {
      const demo = await startDemo(tmp, [], "info");
      try {
        const [before, after] = demo.out.split("\nGantry demo is running at ");
        // Start-up logging first, as text: the time of day, the level, the message.
        expect(before).toMatch(/^\d\d:\d\d:\d\dZ INFO  listening url=http:\/\/127\.0\.0\.1:\d+ settings=\{/m);
        expect(demo.out).not.toContain('{"time":');
        // The printout last: nothing was written after it while the demo started.
        expect(after!.endsWith("Stop with Ctrl-C.\n")).toBe(true);
        // A short line: the settings changed from their defaults, not all sixty.
        const listening = before!.split("\n").find((l) => l.includes(" listening "))!;
        expect(listening.length).toBeLessThan(400);
      } finally {
        expect(await stop(demo, "SIGINT")).toBe(0);
      }
      const json = await startDemo(tmp, ["--log-format", "json"], "info");
      try {
        expect(json.out).toMatch(/^\{"time":"[^"]+","level":"info","msg":"listening"/m);
      } finally {
        expect(await stop(json, "SIGINT")).toBe(0);
      }
      expect(leftovers(tmp)).toEqual([]);
    },
    START_TIMEOUT_MS * 3,
  );

  test(
    "a demo that cannot start (its port is taken) leaves no temporary data dir behind",
    async () => {
      const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
      try {
        const proc = Bun.spawnSync([BUN, "src/main.ts", "demo", "--port", String(taken.port)], {
          cwd: ROOT,
          env: cleanEnv({ TMPDIR: tmp }),
          stdout: "pipe",
          stderr: "pipe",
        });
        expect(proc.exitCode).not.toBe(0);
      } finally {
        taken.stop(true);
      }
      expect(leftovers(tmp)).toEqual([]);
    },
    START_TIMEOUT_MS,
  );

  test(
    "with --data-dir the data is kept, and a second run reuses it without a second helping",
    async () => {
      const dir = join(tmp, "kept");
      const first = await startDemo(tmp, ["--data-dir", dir]);
      expect(first.dataDir).toBe(dir);
      expect(first.out).toContain("kept when the demo stops");
      expect(await stop(first, "SIGINT")).toBe(0);
      expect(existsSync(join(dir, "gantry.db"))).toBe(true);
      const rows = ledgerRows(dir);
      expect(rows).toBeGreaterThan(1000);

      const second = await startDemo(tmp, ["--data-dir", dir]);
      try {
        // The admin token was made by the first run and only its hash is stored: the second says how to get a new one.
        expect(second.out).toContain(`admin reset-token --data-dir ${dir}`);
        const ann = (await (await fetch(`${second.base}/api/v1/announcements?surface=home`)).json()) as any;
        expect(ann.announcements.length).toBe(2);
      } finally {
        expect(await stop(second, "SIGINT")).toBe(0);
      }
      expect(ledgerRows(dir)).toBe(rows);
      expect(leftovers(tmp)).toEqual([]);
    },
    START_TIMEOUT_MS * 3,
  );
});
