/**
 * Runs `gantry serve` as a separate process (the real entry point, signal handling and all), for the
 * reliability tests: memory and descriptor counts from /proc, SIGKILL and SIGTERM, and the captured logs.
 */
import type { Subprocess } from "bun";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "../support/poll";

export const ROOT = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;
export const MAIN = join(ROOT, "src", "main.ts");

/** A port that was free a moment ago (bound on 0 and released), on loopback. */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

export interface ServeOptions {
  dataDir: string;
  upstreamUrl: string;
  upstreamKey?: string;
  /** Passed as --admin-token unless `env.GANTRY_ADMIN_TOKEN` is set. */
  adminToken?: string;
  /** Extra flags, e.g. ["--shutdown-grace-seconds", "2"]. */
  args?: string[];
  env?: Record<string, string>;
  port?: number;
  /** A command the server runs under, which execs it (so the pid is the server's), e.g. ["prlimit", "--nofile=256:256"]. */
  wrap?: string[];
}

export interface ServeProcess {
  url: string;
  port: number;
  pid: number;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Exit code (null when killed by a signal), once the process ended. */
  exited: Promise<number | null>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resident set size in KiB (VmRSS), from /proc. */
  rssKiB(): number;
  /** Open file descriptors, from /proc. */
  fdCount(): number;
  kill(signal: NodeJS.Signals): void;
}

function collect(stream: ReadableStream<Uint8Array>, sink: string[]): Promise<void> {
  return (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) sink.push(decoder.decode(chunk, { stream: true }));
  })().catch(() => {});
}

/** Starts the server and resolves once /healthz answers (rejects with its output if it does not within 15 s). */
export async function startServe(opts: ServeOptions): Promise<ServeProcess> {
  const port = opts.port ?? freePort();
  const args = [
    MAIN, "serve",
    "--host", "127.0.0.1",
    "--port", String(port),
    "--data-dir", opts.dataDir,
    "--upstream-url", opts.upstreamUrl,
    "--log-level", "info",
  ];
  if (opts.upstreamKey) args.push("--upstream-key", opts.upstreamKey);
  if (opts.adminToken && !opts.env?.GANTRY_ADMIN_TOKEN) args.push("--admin-token", opts.adminToken);
  args.push(...(opts.args ?? []));
  // Settings from the environment of the test runner must not leak in: only what this test chose.
  // A test's fleet of clients reports from one loopback address: the per-address heartbeat limits are off
  // unless the test sets them.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    GANTRY_HEARTBEAT_RPM: "0",
    GANTRY_HEARTBEAT_CLIENTS_PER_HOUR: "0",
    ...opts.env,
  };
  const proc = Bun.spawn([...(opts.wrap ?? []), BUN, ...args], { cwd: ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const chunks: string[] = [];
  const drained = Promise.all([collect(proc.stdout, chunks), collect(proc.stderr, chunks)]);
  const exited = proc.exited.then(async (code) => {
    await drained;
    return proc.signalCode ? null : code;
  });
  const url = `http://127.0.0.1:${port}`;
  let ended = false;
  exited.then(() => (ended = true));
  const health = async (): Promise<"healthy" | "exited" | "not yet"> => {
    if (ended) return "exited";
    try {
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      return res.status === 200 ? "healthy" : "not yet";
    } catch {
      return "not yet"; // not listening yet
    }
  };
  let state: "healthy" | "exited" | "not yet";
  try {
    state = (await pollUntil(health, (s) => s !== "not yet", { timeoutMs: 15_000, stepMs: 25 })).value;
  } catch {
    proc.kill("SIGKILL");
    throw new Error(`gantry serve did not become healthy:\n${chunks.join("")}`);
  }
  if (state === "exited") throw new Error(`gantry serve exited early:\n${chunks.join("")}`);
  const pid = proc.pid;
  return {
    url,
    port,
    pid,
    proc,
    exited,
    output: () => chunks.join(""),
    rssKiB: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN),
    fdCount: () => readdirSync(`/proc/${pid}/fd`).length,
    kill: (signal) => proc.kill(signal),
  };
}

/** Runs a one-shot gantry command (e.g. `keys create`) and returns its stdout; throws on a non-zero exit. */
/** `gantry ARGS` with only these settings in its environment: its exit code, stdout and stderr. */
/** What a `gantry serve` that must not start did: its exit code (null when killed), how long it took, its output. */
export interface Refusal {
  code: number | null;
  ms: number;
  stdout: string;
  stderr: string;
}

/** `gantry serve` on a data dir with these settings only, expected to refuse to start; killed after 60 s if it starts. */
export async function refusedStart(dataDir: string, env: Record<string, string>): Promise<Refusal> {
  const started = performance.now();
  const proc = Bun.spawn([BUN, MAIN, "serve", "--host", "127.0.0.1", "--port", String(freePort()), "--data-dir", dataDir], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return { code: proc.signalCode ? null : proc.exitCode, ms: performance.now() - started, stdout, stderr };
}

export async function runGantry(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([BUN, MAIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

/** `gantry ARGS`, which must succeed: its stdout. */
export async function gantryCommand(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { code, out, err } = await runGantry(args, env);
  if (code !== 0) throw new Error(`gantry ${args.join(" ")} exited ${code}: ${err}`);
  return out;
}

/** Runs `tasks` with at most `limit` in flight at once. */
export async function pool<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
