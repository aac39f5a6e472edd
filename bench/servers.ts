/**
 * The processes under test, each its own process on 127.0.0.1: Gantry (`gantry serve` with a temp data dir and a
 * created key), the fake upstream, the bare Bun proxy, the Bun static route and nginx. Each is started with its
 * output in a log file in the work dir and is ready once it answers HTTP.
 */
import { createServer } from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { childPids } from "./proc-stats";

export const ROOT = resolve(import.meta.dir, "..");
/** The checkout whose src/main.ts is benchmarked (GANTRY_BENCH_SOURCE, e.g. an exported older commit). */
export const GANTRY_SOURCE = resolve(process.env.GANTRY_BENCH_SOURCE ?? ROOT);
export const BUN = process.execPath;
export const UPSTREAM_KEY = "bench-upstream-key";
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

export interface Proc {
  name: string;
  url: string;
  port: number;
  /** The process whose CPU and memory count (for nginx, the worker(s): see `pids()`). */
  pid: number;
  pids(): number[];
  log: string;
  stop(signal?: NodeJS.Signals | number): Promise<void>;
  proc: Subprocess;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolvePort(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitReady(url: string, proc: Subprocess, name: string, log: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await sleep(50);
    }
  }
  const text = await Bun.file(log).text().catch(() => "");
  proc.kill("SIGKILL");
  throw new Error(`${name} did not start (${proc.exitCode === null ? "timed out" : `exit ${proc.exitCode}`}); log:\n${text.slice(-2000)}`);
}

export interface SpawnOptions {
  name: string;
  cmd: string[];
  port: number;
  readyPath: string;
  workDir: string;
  cpus?: string | null;
  /** Added to the environment; undefined removes a variable. */
  env?: Record<string, string | undefined>;
}

function environment(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, ...extra };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return env as Record<string, string>;
}

export async function spawnServer(o: SpawnOptions): Promise<Proc> {
  const log = join(o.workDir, `${o.name}.log`);
  const cmd = o.cpus ? ["taskset", "-c", o.cpus, ...o.cmd] : o.cmd;
  const proc = Bun.spawn(cmd, {
    cwd: o.workDir,
    env: environment(o.env),
    stdin: "ignore",
    stdout: Bun.file(log),
    stderr: Bun.file(log + ".err"),
  });
  const url = `http://127.0.0.1:${o.port}`;
  await waitReady(url + o.readyPath, proc, o.name, log);
  return {
    name: o.name,
    url,
    port: o.port,
    pid: proc.pid,
    pids: () => [proc.pid],
    log,
    proc,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const done = await Promise.race([proc.exited.then(() => true), sleep(5000).then(() => false)]);
      if (!done) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
    },
  };
}

export async function startUpstream(workDir: string, cpus: string | null, env: Record<string, string | undefined> = {}, name = "upstream"): Promise<Proc> {
  const port = await freePort();
  return spawnServer({ name, cmd: [BUN, join(ROOT, "bench/upstream-server.ts"), String(port)], port, readyPath: "/v1/models", workDir, cpus, env });
}

/** The bare proxy (`pipe`, the default) or the minimal JavaScript relay (`relay`): see bench/baseline-proxy.ts. */
export async function startBaselineProxy(workDir: string, upstreamBase: string, cpus: string | null, env: Record<string, string | undefined> = {}, mode: "pipe" | "relay" = "pipe"): Promise<Proc> {
  const port = await freePort();
  return spawnServer({
    name: mode === "pipe" ? "bare-proxy" : "js-relay",
    cmd: [BUN, join(ROOT, "bench/baseline-proxy.ts"), String(port), upstreamBase, mode],
    port,
    readyPath: "/",
    workDir,
    cpus,
    env: { BENCH_UPSTREAM_KEY: UPSTREAM_KEY, ...env },
  });
}

/** Bun static routes: `routes` maps a path to the file whose bytes it returns and the headers to send. */
export async function startStaticRoute(workDir: string, routes: Record<string, { file: string; headers: Record<string, string> }>, cpus: string | null): Promise<Proc> {
  const port = await freePort();
  const spec = join(workDir, "static-routes.json");
  writeFileSync(spec, JSON.stringify(routes));
  return spawnServer({ name: "bun-static", cmd: [BUN, join(ROOT, "bench/static-server.ts"), String(port), spec], port, readyPath: "/", workDir, cpus });
}

export interface GantryOptions {
  name?: string;
  dataDir: string;
  upstreamBase: string;
  logLevel: string;
  cpus: string | null;
  /** Extra `bun --preload` module (the SQL counter). */
  preload?: string;
  env?: Record<string, string | undefined>;
}

/** Runs a one-shot gantry CLI command against a data dir; returns its stdout. */
export async function gantryCli(args: string[], dataDir: string): Promise<string> {
  const proc = Bun.spawn([BUN, join(GANTRY_SOURCE, "src/main.ts"), ...args, "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe", cwd: GANTRY_SOURCE });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`gantry ${args.join(" ")} failed (exit ${code}): ${err || out}`);
  return out;
}

export async function createKey(dataDir: string, name: string, flags: string[] = []): Promise<string> {
  const out = await gantryCli(["keys", "create", "--name", name, "--json", ...flags], dataDir);
  return (JSON.parse(out) as { key: string }).key;
}

export async function startGantry(workDir: string, o: GantryOptions): Promise<Proc> {
  const port = await freePort();
  const cmd = [BUN];
  if (o.preload) cmd.push("--preload", o.preload);
  cmd.push(
    join(GANTRY_SOURCE, "src/main.ts"),
    "serve",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--data-dir",
    o.dataDir,
    "--upstream-url",
    o.upstreamBase,
    "--upstream-key",
    UPSTREAM_KEY,
    "--admin-token",
    ADMIN_TOKEN,
    "--log-level",
    o.logLevel,
  );
  // The download scenarios mint thousands of links from one address: the per-address minting budget is off here.
  return spawnServer({ name: o.name ?? "gantry", cmd, port, readyPath: "/healthz", workDir, cpus: o.cpus, env: { GANTRY_DOWNLOAD_MINT_RPM: "0", GANTRY_HEARTBEAT_RPM: "0", GANTRY_HEARTBEAT_CLIENTS_PER_HOUR: "0", ...o.env } });
}

/** nginx as the current user, one worker, sendfile on, everything (pid, logs, temp paths) inside `dir`. */
export async function startNginx(workDir: string, files: { path: string; file: string; type: string }[], cpus: string | null): Promise<Proc> {
  const port = await freePort();
  const dir = join(workDir, "nginx");
  mkdirSync(join(dir, "tmp"), { recursive: true });
  const locations = files
    .map((f) => `    location = ${f.path} { default_type ${f.type}; alias ${f.file}; etag on; add_header Cache-Control no-cache; }`)
    .join("\n");
  const conf = `
${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
${nginxTempPaths(dir)}
    server {
        listen 127.0.0.1:${port};
${locations}
        location = / { return 204; }
    }
}
`;
  const confPath = join(dir, "nginx.conf");
  writeFileSync(confPath, conf);
  const p = await spawnServer({
    name: "nginx",
    cmd: [nginxBinary(), "-p", dir, "-e", join(dir, "error.log"), "-c", confPath, "-g", "daemon off;"],
    port,
    readyPath: "/",
    workDir,
    cpus,
  });
  // The master only supervises: requests are served (and CPU spent) by the worker.
  const workers = (): number[] => {
    const kids = childPids(p.pid);
    return kids.length ? kids : [p.pid];
  };
  return { ...p, pid: workers()[0], pids: workers };
}

/** nginx's temporary paths inside `dir`/tmp (its defaults are system paths a test cannot write). */
export function nginxTempPaths(dir: string): string {
  return ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `    ${t}_temp_path ${dir}/tmp/${t === "client_body" ? "body" : t};`).join("\n");
}

export function nginxBinary(): string {
  return Bun.which("nginx") ?? Bun.which("nginx", { PATH: "/usr/sbin:/usr/local/sbin:/sbin" }) ?? "nginx";
}

export function nginxAvailable(): boolean {
  return nginxBinary() !== "nginx" || Bun.which("nginx") !== null;
}
