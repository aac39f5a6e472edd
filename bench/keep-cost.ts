/**
 * What keeping a streamed `/v1/responses` call costs over the same call with `store: false`, for two checkouts in
 * one process: each checkout's app (as in bench/inproc.ts: real SQLite file, real logger, the fake upstream's bytes
 * from memory) handles the kept and the unkept stream in short alternating chunks, so the machine's drift (other
 * work on a shared machine) falls on all four alike instead of on whichever ran last. CPU time per request from
 * process.cpuUsage, per chunk; the figures are medians over the rounds.
 *   bun bench/keep-cost.ts --baseline /path/to/other/checkout [--rounds 40] [--chunk 500] [--concurrency 16] [--runs N]
 * --runs N: N runs, each in a fresh process, one after the other, and the median of their ratios. Runs of the same
 * code differ by more than one run's resampling interval says (docs/performance.md, "Fifth look"): the process is
 * part of what varies, so only several of them pin the figure.
 */
import { mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchStreamFrames } from "./upstream-frames";
import { RESPONSES_STREAM_BODY } from "./scenarios";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    baseline: { type: "string" },
    rounds: { type: "string" },
    chunk: { type: "string" },
    concurrency: { type: "string" },
    runs: { type: "string" },
    /** One JSON line at the end with the run's figures (what --runs reads from each of its runs). */
    json: { type: "boolean" },
  },
});
if (!values.baseline) throw new Error("--baseline /path/to/checkout is required (e.g. a `git worktree add` of main)");
const ROUNDS = Number(values.rounds ?? 40);
const CHUNK = Number(values.chunk ?? 500);
const C = Number(values.concurrency ?? 16);
const RUNS = Number(values.runs ?? 1);

interface RunFigures {
  ratio: number;
  low: number;
  high: number;
  baseline: number;
  mine: number;
}

/** The middle value (the upper of the two middle ones for an even count). */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (RUNS > 1) {
  const args = ["--baseline", values.baseline, "--rounds", String(ROUNDS), "--chunk", String(CHUNK), "--concurrency", String(C), "--json"];
  const runs: RunFigures[] = [];
  for (let n = 1; n <= RUNS; n++) {
    const child = Bun.spawnSync([process.execPath, import.meta.path, ...args], { stdout: "pipe", stderr: "inherit" });
    const lines = child.stdout.toString().trim().split("\n");
    if (child.exitCode !== 0) throw new Error(`keep-cost run ${n} failed (exit ${child.exitCode}): ${lines.slice(-3).join(" | ")}`);
    const run = JSON.parse(lines.at(-1)!) as RunFigures;
    runs.push(run);
    process.stdout.write(`run ${n}: ${run.ratio.toFixed(2)} (${run.low.toFixed(2)}–${run.high.toFixed(2)}), differences ${run.mine.toFixed(1)} against ${run.baseline.toFixed(1)} µs\n`);
  }
  const ratios = runs.map((r) => r.ratio);
  process.stdout.write(`difference, this checkout / baseline, over ${RUNS} runs: median ${median(ratios).toFixed(2)}, runs ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)}\n`);
  process.exit(0);
}

const STREAM = new TextEncoder().encode(benchStreamFrames().join(""));
const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  if (init?.body && typeof init.body !== "string") await new Response(init.body).arrayBuffer();
  void input;
  return new Response(STREAM, { headers: { "content-type": "text/event-stream" } });
}) as typeof fetch;

/**
 * No per-key limit: the bench's one key would reach the default 20,000 responses within a long run, and from there
 * every kept call also evicts one (about as much again as its write: `bench/store-rows.ts --per-key`), which a
 * checkout from before the limits (issue 31) never does. A checkout without the setting ignores it.
 */
const LIMITS = { "stored-responses-per-key": 0, "stored-bytes-per-key": 0 };
const KEPT = RESPONSES_STREAM_BODY;
const UNKEPT = RESPONSES_STREAM_BODY.replace('"stream":true', '"stream":true,"store":false');

interface Side {
  name: string;
  run(body: string, n: number): Promise<void>;
  close(): void;
  dir: string;
}

async function side(name: string, source: string): Promise<Side> {
  const { configFrom } = await import(join(source, "src/cli/common.ts"));
  const { createDeps } = await import(join(source, "src/deps.ts"));
  const { createApp } = await import(join(source, "src/app.ts"));
  const { createLogger } = await import(join(source, "src/log.ts"));
  const dir = mkdtempSync(join(tmpdir(), "gantry-keep-cost-"));
  const config = configFrom({ "data-dir": dir, "upstream-url": "http://upstream.invalid/v1", "upstream-key": "k", "admin-token": "bench-admin-token-0123456789", "log-level": "info", ...LIMITS });
  const logFd = openSync(join(dir, "gantry.log"), "a");
  const log = createLogger(config.logLevel, (line: string) => void writeSync(logFd, line + "\n"), false);
  const deps = await createDeps(config, { fetch: fakeFetch, log });
  const created = await deps.keys.create({ name: "bench" });
  if (deps.keyCache.reload) await deps.keyCache.reload();
  else deps.keyCache.reloadIfChanged();
  const headers = { authorization: `Bearer ${created.secret ?? created.key}`, "content-type": "application/json" };
  const app = createApp(deps);
  const one = async (body: string) => {
    const res: Response = await app.handle(new Request("http://127.0.0.1/v1/responses", { method: "POST", headers, body }));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${name}: status ${res.status}`);
  };
  return {
    name,
    dir,
    async run(body, n) {
      let next = 0;
      await Promise.all(Array.from({ length: C }, async () => { while (next++ < n) await one(body); }));
      await (deps.ledgerWriter ? deps.ledgerWriter.flush() : deps.ledger.flush());
    },
    close: () => deps.close(),
  };
}

const sides = [await side("baseline", resolve(values.baseline)), await side("this checkout", resolve(import.meta.dir, ".."))];
const cases = sides.flatMap((s) => [{ s, body: KEPT, kind: "kept" }, { s, body: UNKEPT, kind: "store:false" }]);
for (const c of cases) await c.s.run(c.body, 3000);
const perRound = cases.map(() => [] as number[]);
/** The system part of each figure (the kernel's work for the process: mostly the database's writes). */
const sysRound = cases.map(() => [] as number[]);
for (let r = 0; r < ROUNDS; r++) {
  // A different order each round: none of the four is always first after the garbage collector's pause.
  for (let k = 0; k < cases.length; k++) {
    const i = (k + r) % cases.length;
    const c = cases[i]!;
    const c0 = process.cpuUsage();
    await c.s.run(c.body, CHUNK);
    const used = process.cpuUsage(c0);
    perRound[i]!.push((used.user + used.system) / CHUNK);
    sysRound[i]!.push(used.system / CHUNK);
  }
}
process.stdout.write(`keep-cost: ${ROUNDS} rounds of ${CHUNK} requests per case, ${C} at a time\n`);
for (const [j, s] of sides.entries()) {
  const kept = perRound[2 * j]!;
  const unkept = perRound[2 * j + 1]!;
  const diff = kept.map((k, r) => k - unkept[r]!);
  const sysDiff = sysRound[2 * j]!.map((k, r) => k - sysRound[2 * j + 1]![r]!);
  process.stdout.write(`${s.name.padEnd(14)} kept ${median(kept).toFixed(1)} µs  store:false ${median(unkept).toFixed(1)} µs  difference (median of rounds) ${median(diff).toFixed(1)} µs, of it system ${median(sysDiff).toFixed(1)} µs\n`);
}
const diffOf = (j: number) => perRound[2 * j]!.map((k, r) => k - perRound[2 * j + 1]![r]!);
const ratio = median(diffOf(1)) / median(diffOf(0));
const [low, high] = ratioInterval(diffOf(0), diffOf(1));
process.stdout.write(`difference, this checkout / baseline: ${ratio.toFixed(2)} (90% of resamplings between ${low.toFixed(2)} and ${high.toFixed(2)})\n`);
if (values.json) process.stdout.write(JSON.stringify({ ratio, low, high, baseline: median(diffOf(0)), mine: median(diffOf(1)) } satisfies RunFigures) + "\n");

/**
 * How far the ratio can be trusted: the rounds drawn again with replacement (the same draw for both sides, since a
 * round's four chunks ran side by side), 2,000 times, and the 5th and 95th percentiles of the ratios of medians. A
 * fixed seed, so the same rounds always give the same interval.
 */
function ratioInterval(base: number[], mine: number[]): [number, number] {
  let seed = 0x9e3779b9;
  // mulberry32: small, and good enough to draw indexes.
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const ratios: number[] = [];
  for (let b = 0; b < 2000; b++) {
    const pick = base.map(() => Math.floor(next() * base.length));
    ratios.push(median(pick.map((i) => mine[i]!)) / median(pick.map((i) => base[i]!)));
  }
  ratios.sort((a, b) => a - b);
  return [ratios[Math.floor(ratios.length * 0.05)]!, ratios[Math.floor(ratios.length * 0.95)]!];
}
for (const s of sides) {
  s.close();
  rmSync(s.dir, { recursive: true, force: true });
}
process.exit(0);
