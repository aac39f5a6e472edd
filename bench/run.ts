/**
 * `bun run bench` — Gantry's benchmark suite (issue 8). Starts the servers under test as separate processes on
 * 127.0.0.1, runs every scenario (baseline and target alternately, median of the runs, ratios with their
 * spread), prints one table and writes it all as JSON to bench/results/<timestamp>.json.
 *
 *   bun run bench                      full suite (~10 min on 2 cores)
 *   bun run bench --quick              smoke version: each scenario once for ~1 s (CI); fails only if
 *                                      something does not start or errors, never on a missed target
 *   bun run bench --only models,heartbeats
 *   options: --runs N (3) --duration S (5) --warmup S (2) --streams N (1000) --big-mib N (200)
 *            --log-level info|warn (info, Gantry's default) --no-pin --keep --list
 *
 * With two or more cores, the servers under test run on CPU 0 and the load generator and fake upstream on
 * CPU 1 (taskset), so the two sides do not steal each other's core; --no-pin turns that off.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BIG_NAME, captureDocument, createAnnouncements, publishCatalogue } from "./fixtures";
import { wrkAvailable } from "./load";
import { formatTable, judge, writeJson, type ScenarioResult } from "./report";
import { runHeartbeats } from "./run-heartbeats";
import { runKeyCheck } from "./run-key-check";
import { runOpenStreams } from "./run-open-streams";
import { runPair, type RunOptions } from "./run-pair";
import { SCENARIOS, type BenchContext, type Scenario, type ServerName } from "./scenarios";
import { sharedBackendsUnavailable, startSharedBackends, type SharedBackends } from "./shared-backends";

/** Every limit set, none reached in a run: the admission checks them all on every request. */
const LIMITS = ["--rpm", "100000000", "--rpd", "1000000000", "--concurrency", "100000", "--quota-tokens", "1000000000000"];
import {
  ROOT,
  createKey,
  gantryCli,
  nginxAvailable,
  nginxBinary,
  startBaselineProxy,
  startGantry,
  startNginx,
  startStaticRoute,
  startUpstream,
  type Proc,
} from "./servers";

const { values: flags } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: "boolean" },
    only: { type: "string", multiple: true },
    runs: { type: "string" },
    duration: { type: "string" },
    warmup: { type: "string" },
    streams: { type: "string" },
    "big-mib": { type: "string" },
    "log-level": { type: "string" },
    "no-pin": { type: "boolean" },
    keep: { type: "boolean" },
    list: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});

if (flags.help) {
  process.stdout.write(
    "Usage: bun run bench [--quick] [--only a,b] [--runs N] [--duration S] [--warmup S] [--streams N] [--big-mib N] [--log-level L] [--no-pin] [--keep] [--list]\n",
  );
  process.exit(0);
}
if (flags.list) {
  for (const s of SCENARIOS) process.stdout.write(`${s.name.padEnd(20)} ${s.title}\n`);
  process.exit(0);
}

const quick = flags.quick === true;
const only = (flags.only ?? []).flatMap((s) => s.split(",")).filter(Boolean);
const unknown = only.filter((n) => !SCENARIOS.some((s) => s.name === n));
if (unknown.length) {
  process.stderr.write(`unknown scenario(s): ${unknown.join(", ")} (see --list)\n`);
  process.exit(2);
}
const selected = SCENARIOS.filter((s) => only.length === 0 || only.includes(s.name));
const cores = availableParallelism();
const pin = !flags["no-pin"] && cores >= 2 && Bun.which("taskset") !== null;
const workDir = mkdtempSync(join(tmpdir(), "gantry-bench-"));

const o: RunOptions = {
  quick,
  runs: Number(flags.runs ?? (quick ? 1 : 3)),
  durationSeconds: Number(flags.duration ?? (quick ? 1 : 5)),
  warmupSeconds: Number(flags.warmup ?? (quick ? 0 : 2)),
  serverCpus: pin ? "0" : null,
  loadCpus: pin ? `1-${cores - 1}` : null,
  logLevel: flags["log-level"] ?? "info",
  streams: Number(flags.streams ?? (quick ? 100 : 1000)),
  workDir,
};
const bigSize = Number(flags["big-mib"] ?? (quick ? 16 : 200)) * 1024 * 1024;

function say(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

function commandLine(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n")[0] ?? "";
}

/** The issue asks for wrk and nginx from Debian, installed by the script when missing (as root only). */
function ensureTools(): void {
  const missing = [!wrkAvailable() && "wrk", !nginxAvailable() && "nginx"].filter(Boolean) as string[];
  if (missing.length === 0) return;
  if (process.getuid?.() === 0 && Bun.which("apt-get")) {
    say(`installing ${missing.join(", ")} from Debian`);
    spawnSync("apt-get", ["install", "-y", "-qq", ...missing], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  }
  if (!wrkAvailable()) throw new Error("wrk is not installed (apt-get install wrk)");
}

function machine() {
  let mem = "";
  try {
    mem = execFileSync("free", ["-h"], { encoding: "utf8" }).split("\n")[1]?.trim().split(/\s+/)[1] ?? "";
  } catch {
    // no free(1)
  }
  return {
    cores,
    cpu: cpus()[0]?.model ?? "",
    memory: mem,
    kernel: commandLine("uname", ["-r"]),
    bun: Bun.version,
    wrk: commandLine("wrk", ["-v"]).replace(/ Copyright.*/, ""),
    nginx: nginxAvailable() ? commandLine(nginxBinary(), ["-v"]).replace("nginx version: ", "") : "not installed",
    pinned: pin ? `servers on CPU ${o.serverCpus}, wrk and fake upstream on CPU ${o.loadCpus}` : "no",
  };
}

const SITE = new Set(["latest-vs-static", "latest-vs-nginx", "latest-filtered", "announcements", "download-full", "download-ranged"]);
const needsServer = (name: ServerName) =>
  selected.some((s) => s.kind === "pair" && (s.baseline.server === name || s.target.server === name));

async function main(): Promise<number> {
  const started = Date.now();
  ensureTools();
  const info = machine();
  say(`work dir ${workDir}; ${info.pinned === "no" ? "not pinned" : info.pinned}`);
  const procs: Proc[] = [];
  const results: ScenarioResult[] = [];
  let setupError: string | null = null;
  let sitePending: string | null = null;
  let sharedPending: string | null = null;
  let shared: SharedBackends | null = null;
  const ctx: BenchContext = {
    servers: {},
    apiKey: "",
    limitedKey: "",
    workDir,
    quick,
    durationSeconds: o.durationSeconds,
    download: { assetId: 0, size: bigSize },
    mintTokens: async () => {
      throw new Error("no download asset");
    },
  };
  let upstreamBase = "";

  try {
    say("starting the fake upstream");
    const upstream = await startUpstream(workDir, o.loadCpus, { BENCH_SLOW_HOLD_MS: "60000", BENCH_SLOW_DELTA_MS: "1000" });
    procs.push((ctx.servers.upstream = upstream));
    upstreamBase = upstream.url + "/v1";

    if (needsServer("bare-proxy")) {
      procs.push((ctx.servers["bare-proxy"] = await startBaselineProxy(workDir, upstreamBase, o.serverCpus)));
    }
    if (needsServer("js-relay")) {
      procs.push((ctx.servers["js-relay"] = await startBaselineProxy(workDir, upstreamBase, o.serverCpus, {}, "relay")));
    }
    if (needsServer("gantry")) {
      const dataDir = join(workDir, "gantry-data");
      mkdirSync(dataDir, { recursive: true });
      ctx.apiKey = await createKey(dataDir, "bench");
      if (selected.some((s) => SITE.has(s.name))) {
        say(`publishing the release catalogue (big file ${bigSize / 1024 / 1024} MiB) and announcements`);
        try {
          await publishCatalogue(dataDir, workDir, bigSize, quick ? 2 : 6);
          await createAnnouncements(dataDir);
        } catch (err) {
          sitePending = `release/announcement setup failed: ${(err as Error).message.split("\n")[0]}`;
        }
      }
      ctx.limitedKey = await createKey(dataDir, "bench-limited", LIMITS);
      if (needsServer("gantry-shared")) {
        const why = sharedBackendsUnavailable();
        if (why) sharedPending = why;
        else {
          // The same data on PostgreSQL (copied by `gantry store copy`, before the embedded server holds the data dir).
          say("starting PostgreSQL (fsync on) and Redis; copying the data into PostgreSQL; starting Gantry on them");
          try {
            shared = await startSharedBackends(o.serverCpus);
            await gantryCli(["store", "copy", "--to", shared.databaseUrl], dataDir);
            const sharedDir = join(workDir, "gantry-shared-data");
            mkdirSync(sharedDir, { recursive: true });
            const proc = await startGantry(workDir, {
              name: "gantry-shared",
              dataDir: sharedDir,
              upstreamBase,
              logLevel: o.logLevel,
              cpus: o.serverCpus,
              env: { GANTRY_DATABASE_URL: shared.databaseUrl, GANTRY_REDIS_URL: shared.redisUrl },
            });
            const backends = shared;
            procs.push((ctx.servers["gantry-shared"] = { ...proc, pids: () => [...proc.pids(), ...backends.pids()] }));
          } catch (err) {
            sharedPending = `PostgreSQL + Redis setup failed: ${(err as Error).message.split("\n")[0]}`;
          }
        }
      }
      say("starting Gantry");
      const gantry = await startGantry(workDir, { dataDir, upstreamBase, logLevel: o.logLevel, cpus: o.serverCpus });
      procs.push((ctx.servers.gantry = gantry));

      if (selected.some((s) => SITE.has(s.name)) && !sitePending) {
        const docs = join(workDir, "docs");
        mkdirSync(docs, { recursive: true });
        try {
          const latest = await captureDocument(`${gantry.url}/api/v1/latest`, join(docs, "latest.json"));
          const filtered = await captureDocument(`${gantry.url}/api/v1/latest?platform=windows&arch=x64`, join(docs, "latest-filtered.json"));
          const ann = await captureDocument(
            `${gantry.url}/api/v1/announcements?surface=client&app=bench-app&version=1.4.0&locale=en-US`,
            join(docs, "announcements.json"),
          );
          const doc = (await Bun.file(latest.file).json()) as { assets?: Array<{ id: number; name: string; size: number }> };
          const big = doc.assets?.find((a) => a.name === BIG_NAME);
          if (!big) throw new Error(`${BIG_NAME} is not in /api/v1/latest`);
          ctx.download = { assetId: big.id, size: big.size };
          ctx.mintTokens = async (n) => {
            const tokens: string[] = [];
            let issued = 0;
            await Promise.all(
              Array.from({ length: 8 }, async () => {
                while (issued < n) {
                  issued++;
                  const r = await fetch(`${gantry.url}/api/v1/download/${big.id}`, { redirect: "manual" });
                  const loc = r.headers.get("location");
                  if (r.status !== 302 || !loc) throw new Error(`/api/v1/download/${big.id}: ${r.status} ${await r.text()}`);
                  tokens.push(loc.slice(loc.lastIndexOf("/") + 1));
                }
              }),
            );
            return tokens;
          };
          if (needsServer("bun-static")) {
            procs.push(
              (ctx.servers["bun-static"] = await startStaticRoute(
                workDir,
                { "/latest.json": latest, "/latest-filtered.json": filtered, "/announcements.json": ann },
                o.serverCpus,
              )),
            );
          }
          if (needsServer("nginx") && nginxAvailable()) {
            procs.push(
              (ctx.servers.nginx = await startNginx(
                workDir,
                [
                  { path: "/latest.json", file: latest.file, type: "application/json" },
                  { path: "/big.bin", file: join(workDir, "release-files", BIG_NAME), type: "application/gzip" },
                ],
                o.serverCpus,
              )),
            );
          }
        } catch (err) {
          sitePending = `site documents not available: ${(err as Error).message.split("\n")[0]}`;
        }
      }
    }
  } catch (err) {
    setupError = (err as Error).message;
    say(`setup failed: ${setupError}`);
  }

  for (const sc of setupError ? [] : selected) {
    const res: ScenarioResult = { name: sc.name, title: sc.title, kind: sc.kind, baseline: null, target: null, status: "info", runs: [], sides: {}, ratios: {}, values: {}, targets: [], notes: [] };
    if (sc.note) res.notes.push(sc.note);
    results.push(res);
    const t0 = Date.now();
    say(`${sc.name}: ${sc.title}`);
    try {
      if (sc.kind === "pair" && sc.target.server === "gantry-shared" && sharedPending) {
        res.status = "skipped";
        res.error = sharedPending;
      } else if (SITE.has(sc.name) && sitePending) {
        res.status = "pending";
        res.error = sitePending;
      } else if (sc.kind === "pair" && (sc.baseline.server === "nginx" || sc.target.server === "nginx") && !ctx.servers.nginx) {
        res.status = "skipped";
        res.error = "nginx is not installed";
      } else if (sc.kind === "pair") await runPair(sc, ctx, o, res);
      else if (sc.kind === "heartbeats") await runHeartbeats(ctx, o, res);
      else if (sc.kind === "open-streams") await runOpenStreams(upstreamBase, o, res);
      else if (sc.kind === "key-check") await runKeyCheck(upstreamBase, o, res);
    } catch (err) {
      res.status = "error";
      res.error = (err as Error).message;
      say(`${sc.name}: ERROR ${res.error}`);
    }
    judge(res, sc.targets);
    say(`${sc.name}: ${res.status} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }

  for (const p of procs.reverse()) await p.stop().catch(() => {});
  await shared?.stop().catch(() => {});

  const date = new Date().toISOString();
  const header = [
    `Gantry benchmarks — ${date}${quick ? " (quick: 1 run of ~1 s each, figures are not meaningful)" : ""}`,
    `machine: ${info.cores} cores (${info.cpu}), ${info.memory} RAM, Linux ${info.kernel}; bun ${info.bun}, ${info.wrk}, nginx ${info.nginx}; pinned: ${info.pinned}`,
    `each figure: median of ${o.runs} alternating run(s) of ${o.durationSeconds} s (baseline, Gantry, baseline, ...), after ${o.warmupSeconds} s warm-up; ratios are Gantry/baseline per run pair`,
    "",
  ];
  const table = formatTable(results);
  process.stdout.write(header.join("\n") + "\n" + table + "\n\n");
  for (const r of results) {
    const details = [...Object.entries(r.values).filter(([k]) => !k.includes(":spread") && k !== "bytes" && k !== "summary").map(([k, v]) => `${k}: ${v}`), ...r.notes];
    if (r.error && r.status !== "error") details.push(r.error);
    if (r.status === "error") details.push(`ERROR: ${r.error}`);
    if (details.length) process.stdout.write(`${r.name}:\n${details.map((d) => `  - ${d}`).join("\n")}\n`);
  }
  if (setupError) process.stdout.write(`\nSETUP FAILED: ${setupError}\n`);

  const file = writeJson(join(ROOT, "bench/results"), { date, quick, options: { ...o, workDir: undefined }, machine: info, setupError, results });
  process.stdout.write(`\nresults: ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  if (!flags.keep) rmSync(workDir, { recursive: true, force: true });
  else say(`kept ${workDir}`);
  const failed = setupError !== null || results.some((r) => r.status === "error");
  return failed ? 1 : 0;
}

process.exit(await main());
