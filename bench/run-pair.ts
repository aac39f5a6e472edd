/**
 * Runs a "pair" scenario: one checked request per side, a warm-up of each, then baseline and target
 * alternately (b, t, b, t, ...) under the same wrk load, measuring the server's CPU and peak RSS around each.
 */
import { measure, rssKb } from "./proc-stats";
import { runWrk, type DynamicLoad, type LoadRequest, type LoadResult } from "./load";
import type { RunRecord, ScenarioResult } from "./report";
import { pairRatios, summarizeSide } from "./report";
import type { BenchContext, Check, PairScenario, Side } from "./scenarios";
import { sleep, type Proc } from "./servers";

export interface RunOptions {
  quick: boolean;
  runs: number;
  durationSeconds: number;
  warmupSeconds: number;
  serverCpus: string | null;
  loadCpus: string | null;
  logLevel: string;
  streams: number;
  workDir: string;
}

export async function checkOnce(proc: Proc, check: Check, ctx: BenchContext): Promise<void> {
  const req = check.request(ctx);
  const res = await fetch(proc.url + req.path, { method: req.method, headers: req.headers, body: req.body, redirect: "manual" });
  const text = await res.text();
  const want = check.status ?? 200;
  if (res.status !== want) throw new Error(`${proc.name} ${req.method} ${req.path}: status ${res.status} (expected ${want}): ${text.slice(0, 300)}`);
  for (const [needle, times = 1] of check.contains ?? []) {
    const found = text.split(needle).length - 1;
    if (found < times) {
      throw new Error(`${proc.name} ${req.method} ${req.path}: "${needle}" found ${found} times (expected ≥ ${times}): ${text.slice(0, 300)}`);
    }
  }
}

/** One measured wrk run against `proc`. */
export async function measuredRun(
  proc: Proc,
  side: RunRecord["side"],
  request: LoadRequest | DynamicLoad,
  connections: number,
  o: RunOptions,
  durationSeconds = o.durationSeconds,
  env?: Record<string, string>,
): Promise<{ record: RunRecord; load: LoadResult }> {
  const pids = proc.pids();
  const rssBefore = rssKb(pids[0]!);
  const m = measure(pids);
  const load = await runWrk({ baseUrl: proc.url, request, connections, durationSeconds, workDir: o.workDir, cpus: o.loadCpus, env });
  const usage = m.stop();
  const record: RunRecord = {
    side,
    server: proc.name,
    requests: load.requests,
    seconds: load.seconds,
    rps: load.rps,
    bytesPerSecond: load.bytesPerSecond,
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    cpuUsPerRequest: load.requests > 0 ? (usage.cpuSeconds * 1e6) / load.requests : Number.NaN,
    serverCpuUtil: usage.cpuSeconds / load.seconds,
    loadCpuUtil: load.loadCpuSeconds / load.seconds,
    rssBeforeMiB: rssBefore / 1024,
    peakRssMiB: usage.peakRssKb / 1024,
    statusErrors: load.statusErrors,
    socketErrors: load.socketErrors,
    timeouts: load.timeouts,
  };
  return { record, load };
}

export function runProblems(r: RunRecord): string | null {
  if (r.requests === 0) {
    const cpu = Number.isFinite(r.serverCpuUtil) ? `${Math.round(r.serverCpuUtil * 100)}%` : "?";
    return `${r.server}: no request completed in ${r.seconds.toFixed(1)} s (server CPU ${cpu}, ${r.socketErrors} socket errors, ${r.timeouts} timeouts)`;
  }
  if (r.statusErrors > 0) return `${r.server}: ${r.statusErrors} of ${r.requests} answers were not 2xx/3xx`;
  return null;
}

function serverOf(ctx: BenchContext, side: Side): Proc {
  const p = ctx.servers[side.server];
  if (!p) throw new Error(`server ${side.server} is not running`);
  return p;
}

/** A quick (smoke) run that completed no request is measured once more over this window before it fails. */
const QUICK_RETRY_SECONDS = 5;

export async function runPair(sc: PairScenario, ctx: BenchContext, o: RunOptions, res: ScenarioResult): Promise<void> {
  const base = serverOf(ctx, sc.baseline);
  const target = serverOf(ctx, sc.target);
  res.baseline = base.name;
  res.target = target.name;
  if (sc.bytes) res.values.bytes = 1;
  if (sc.baseline.check) await checkOnce(base, sc.baseline.check, ctx);
  if (sc.target.check) await checkOnce(target, sc.target.check, ctx);

  if (o.warmupSeconds > 0) {
    for (const [proc, side] of [[base, sc.baseline], [target, sc.target]] as const) {
      await runWrk({ baseUrl: proc.url, request: await side.load(ctx), connections: sc.connections, durationSeconds: o.warmupSeconds, workDir: o.workDir, cpus: o.loadCpus });
    }
  }
  for (let i = 0; i < o.runs; i++) {
    for (const [proc, side, name] of [[base, sc.baseline, "baseline"], [target, sc.target, "target"]] as const) {
      await sleep(200);
      let { record } = await measuredRun(proc, name, await side.load(ctx), sc.connections, o);
      if (o.quick && record.requests === 0) {
        // The smoke run's one-second window, with no warm-up, can close before a machine still busy with what ran
        // before (CI runs it after the test suites) answers its first request. It checks that every scenario
        // works, not how fast: measured again over a longer window, and said so, before it counts as a failure.
        res.notes.push(`${runProblems(record)}; measured again over ${QUICK_RETRY_SECONDS} s`);
        ({ record } = await measuredRun(proc, name, await side.load(ctx), sc.connections, o, QUICK_RETRY_SECONDS));
      }
      res.runs.push(record);
      const problem = runProblems(record);
      if (problem) throw new Error(problem);
      if (record.socketErrors + record.timeouts > 0) res.notes.push(`${proc.name} run ${i + 1}: ${record.socketErrors} socket errors, ${record.timeouts} timeouts`);
    }
  }
  res.sides = {
    baseline: summarizeSide(res.runs.filter((r) => r.side === "baseline")),
    target: summarizeSide(res.runs.filter((r) => r.side === "target")),
  };
  res.ratios = pairRatios(res.runs);
  const cpu = res.ratios.cpu;
  if (sc.targets.length === 0 && !sc.addedLatency && cpu) {
    // Context rows (no target) still show how the two sides compare.
    res.values.summary = `CPU/req: **${cpu.median.toFixed(2)}×** (${cpu.min.toFixed(2)}–${cpu.max.toFixed(2)}) the baseline`;
  }
  if (sc.addedLatency && res.sides.baseline && res.sides.target) {
    const added = res.sides.target.p50Ms - res.sides.baseline.p50Ms;
    res.values["p50 added by Gantry (ms)"] = Math.round(added * 1000) / 1000;
    res.values.summary = `p50 ${res.sides.target.p50Ms.toFixed(2)} ms vs ${res.sides.baseline.p50Ms.toFixed(2)} ms direct: +${added.toFixed(2)} ms`;
  }
}
