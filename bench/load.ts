/**
 * Load from a second process: wrk (Debian's) driven by a generated Lua script that sets the method, body and
 * headers (or builds each request, for heartbeat ids and download tokens), and reports its exact summary as one
 * JSON line from wrk's `done()` hook. `--latency` is passed too, so wrk's own text report stays readable in logs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A Lua `request()` body instead of a fixed request: for per-request ids, tokens and ranges. */
export interface DynamicLoad {
  /** Lua code defining `init(args)` and `request()`; may use the globals set in `globals`. */
  lua: string;
}

export interface LoadOptions {
  baseUrl: string;
  request: LoadRequest | DynamicLoad;
  connections: number;
  threads?: number;
  durationSeconds: number;
  timeoutSeconds?: number;
  /** Directory for the generated script. */
  workDir: string;
  /** CPU list for taskset (the load generator's own core), or null. */
  cpus?: string | null;
  /** Extra environment for the Lua script (os.getenv). */
  env?: Record<string, string>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  bytes: number;
  rps: number;
  bytesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx/3xx answers. */
  statusErrors: number;
  socketErrors: number;
  timeouts: number;
  /** CPU seconds the load generator itself used (to see when it, not the server, was the limit). */
  loadCpuSeconds: number;
  raw: string;
}

const DONE_MARK = "WRKJSON ";

const DONE_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${DONE_MARK}{"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

function luaString(s: string): string {
  // A long bracket string with a level that cannot occur in the text.
  let eq = "";
  while (s.includes(`]${eq}]`)) eq += "=";
  return `[${eq}[${s}]${eq}]`;
}

export function staticLua(req: LoadRequest): string {
  const lines = [`wrk.method = "${req.method}"`, `wrk.path = ${luaString(req.path)}`];
  if (req.body !== undefined) lines.push(`wrk.body = ${luaString(req.body)}`);
  // The spaces keep "[ [[" from reading as a long bracket.
  for (const [k, v] of Object.entries(req.headers ?? {})) lines.push(`wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`);
  return lines.join("\n") + "\n";
}

let scriptCounter = 0;

/** Starts wrk; `result` settles when it ends (use `proc` to signal it, e.g. for the kill test). */
export function startWrk(opts: LoadOptions): { proc: ReturnType<typeof Bun.spawn>; result: Promise<LoadResult> } {
  const lua = ("lua" in opts.request ? opts.request.lua : staticLua(opts.request)) + DONE_LUA;
  const script = join(opts.workDir, `load-${process.pid}-${++scriptCounter}.lua`);
  writeFileSync(script, lua);
  const threads = Math.min(opts.threads ?? 1, opts.connections);
  const args = [
    "wrk",
    `-t${threads}`,
    `-c${opts.connections}`,
    `-d${Math.max(1, Math.round(opts.durationSeconds))}s`,
    `--timeout`,
    `${opts.timeoutSeconds ?? 10}s`,
    "--latency",
    "-s",
    script,
    opts.baseUrl,
  ];
  const cmd = opts.cpus ? ["taskset", "-c", opts.cpus, ...args] : args;
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...opts.env } });
  return { proc, result: collect(proc) };
}

export function runWrk(opts: LoadOptions): Promise<LoadResult> {
  return startWrk(opts).result;
}

async function collect(proc: ReturnType<typeof Bun.spawn>): Promise<LoadResult> {
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    new Response(proc.stderr as ReadableStream).text(),
    proc.exited,
  ]);
  const line = out.split("\n").find((l) => l.startsWith(DONE_MARK));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${err.trim() || out.trim()}`);
  const j = JSON.parse(line.slice(DONE_MARK.length));
  const seconds = j.duration_us / 1e6;
  return {
    requests: j.requests,
    seconds,
    bytes: j.bytes,
    rps: j.requests / seconds,
    bytesPerSecond: j.bytes / seconds,
    p50Ms: j.p50_us / 1000,
    p99Ms: j.p99_us / 1000,
    statusErrors: j.status,
    socketErrors: j.connect + j.read + j.write,
    timeouts: j.timeout,
    loadCpuSeconds: Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1e6,
    raw: out,
  };
}

export function wrkAvailable(): boolean {
  return Bun.which("wrk") !== null;
}
