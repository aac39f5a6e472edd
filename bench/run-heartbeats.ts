/**
 * Heartbeat ingest: a Gantry of its own (own data dir), 64 connections posting heartbeats for 100,000 distinct
 * client ids (a wrk Lua script walks a permutation of the ids), measured as acknowledged heartbeats per second.
 *
 * Durability is checked, not assumed: after the runs, the heartbeats stored (SUM(count) of the clients table and
 * of the journal not yet folded into it) must be at least those acknowledged; then the server is SIGKILLed in the
 * middle of a load run and the same must still hold. Where strace is available (full runs), fsync calls are counted during a short traced run
 * to show that acknowledgements wait for fsync'd group commits.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startWrk, type DynamicLoad } from "./load";
import type { ScenarioResult } from "./report";
import { summarizeSide } from "./report";
import { measuredRun, runProblems, type RunOptions } from "./run-pair";
import { HEARTBEAT_BODY, type BenchContext } from "./scenarios";
import { sleep, startGantry, type Proc } from "./servers";

const CLIENT_IDS = 100_000;
const CONNECTIONS = 64;

function heartbeatLua(): DynamicLoad {
  return {
    lua: `
local threads = 0
setup = function(thread) thread:set("tid", threads); threads = threads + 1 end
local counter = 0
local body = ${JSON.stringify(HEARTBEAT_BODY)}
-- Each run continues the walk where the previous ones stopped (BENCH_HB_OFFSET = heartbeats sent so far).
init = function(args) counter = (tonumber(os.getenv("BENCH_HB_OFFSET")) or 0) + (tonumber(tid) or 0) * 50000 end
request = function()
  counter = counter + 1
  -- 7919 is prime to ${CLIENT_IDS}: consecutive counters walk all ids before repeating one.
  local id = (counter * 7919) % ${CLIENT_IDS}
  return wrk.format("POST", "/api/v1/client/heartbeat",
    { ["Content-Type"] = "application/json", ["X-App-Client-ID"] = string.format("bench-client-%06d", id) }, body)
end
`,
  };
}

function stored(dbPath: string): { heartbeats: number; clients: number } {
  const db = new Database(dbPath);
  try {
    // Stored = folded into clients or still in the journal (both committed; the server folds in the background).
    const row = db
      .query(
        `SELECT (SELECT COALESCE(SUM(count), 0) FROM clients) + (SELECT COALESCE(SUM(count), 0) FROM heartbeat_journal) AS n,
                (SELECT COUNT(*) FROM (SELECT client_id FROM clients UNION SELECT client_id FROM heartbeat_journal)) AS c`,
      )
      .get() as { n: number; c: number };
    return { heartbeats: row.n, clients: row.c };
  } finally {
    db.close();
  }
}

async function countFsyncs(proc: Proc, o: RunOptions, seconds: number, offset: number): Promise<{ fsyncs: number; acked: number } | null> {
  if (!Bun.which("strace")) return null;
  const out = join(o.workDir, "strace-heartbeats.txt");
  const strace = Bun.spawn(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", out, "-p", String(proc.pid)], { stderr: "ignore", stdout: "ignore" });
  await sleep(500);
  const w = startWrk({ baseUrl: proc.url, request: heartbeatLua(), connections: CONNECTIONS, durationSeconds: seconds, workDir: o.workDir, cpus: o.loadCpus, env: { BENCH_HB_OFFSET: String(offset) } });
  const load = await w.result;
  strace.kill("SIGINT");
  await strace.exited;
  const text = readFileSync(out, "utf8");
  let fsyncs = 0;
  for (const m of text.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$/gm)) fsyncs += Number(m[1]);
  return { fsyncs, acked: load.requests - load.statusErrors };
}

export async function runHeartbeats(ctx: BenchContext, o: RunOptions, res: ScenarioResult): Promise<void> {
  const dataDir = join(o.workDir, "heartbeat-data");
  mkdirSync(dataDir, { recursive: true });
  // The gateway is not used here: any upstream address will do.
  const proc = await startGantry(o.workDir, { name: "gantry-heartbeats", dataDir, upstreamBase: "http://127.0.0.1:9/v1", logLevel: o.logLevel, cpus: o.serverCpus });
  res.target = proc.name;
  res.baseline = null;
  let acked = 0;
  try {
    const probe = await fetch(proc.url + "/api/v1/client/heartbeat", {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-client-id": "bench-probe" },
      body: HEARTBEAT_BODY,
    });
    if (probe.status !== 200) throw new Error(`heartbeat probe answered ${probe.status}: ${await probe.text()}`);
    acked += 1;

    if (o.warmupSeconds > 0) {
      const { load } = await measuredRun(proc, "target", heartbeatLua(), CONNECTIONS, o, o.warmupSeconds, { BENCH_HB_OFFSET: String(acked) });
      acked += load.requests - load.statusErrors;
    }
    for (let i = 0; i < o.runs; i++) {
      await sleep(200);
      const { record } = await measuredRun(proc, "target", heartbeatLua(), CONNECTIONS, o, o.durationSeconds, { BENCH_HB_OFFSET: String(acked) });
      res.runs.push(record);
      acked += record.requests - record.statusErrors;
      const problem = runProblems(record);
      if (problem) throw new Error(problem);
    }
    res.sides = { target: summarizeSide(res.runs) };

    const dbPath = join(dataDir, "gantry.db");
    const afterRuns = stored(dbPath);
    res.values["acknowledged"] = acked;
    res.values["stored"] = afterRuns.heartbeats;
    res.values["distinct clients"] = afterRuns.clients;
    if (afterRuns.heartbeats < acked) throw new Error(`only ${afterRuns.heartbeats} heartbeats stored of ${acked} acknowledged`);

    if (!o.quick) {
      const traced = await countFsyncs(proc, o, 2, acked);
      if (traced) {
        acked += traced.acked;
        res.values["fsyncs (traced run)"] = traced.fsyncs;
        res.values["heartbeats per fsync (traced run)"] = traced.fsyncs ? Math.round((traced.acked / traced.fsyncs) * 10) / 10 : "–";
      }
    }

    // Kill -9 in the middle of a load run: whatever was acknowledged must be in the database.
    const killRun = startWrk({
      baseUrl: proc.url,
      request: heartbeatLua(),
      connections: CONNECTIONS,
      durationSeconds: o.quick ? 1 : 3,
      workDir: o.workDir,
      cpus: o.loadCpus,
      env: { BENCH_HB_OFFSET: String(acked) },
    });
    await sleep(o.quick ? 500 : 1500);
    proc.proc.kill("SIGKILL");
    await proc.proc.exited;
    const killed = await killRun.result;
    acked += killed.requests - killed.statusErrors;
    const afterKill = stored(dbPath);
    res.values["acknowledged incl. kill run"] = acked;
    res.values["stored after SIGKILL"] = afterKill.heartbeats;
    if (afterKill.heartbeats < acked) throw new Error(`after SIGKILL only ${afterKill.heartbeats} heartbeats stored of ${acked} acknowledged`);
    res.values.summary = `${afterKill.heartbeats} stored ≥ ${acked} acknowledged (SIGKILL mid-run)`;
  } finally {
    await proc.stop("SIGKILL");
  }
}
