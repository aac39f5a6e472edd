/**
 * The API key check, verified by counting: a Gantry of its own runs with bench/sql-counter.ts preloaded, which
 * counts every SQL statement bun:sqlite executes. The counts are taken before and after a load run of
 * authenticated requests; statements that read keys (SELECTs of api_keys, key_usage, the keys generation) divided
 * by the requests served is the per-request key SQL, which must be ~0 (only the change feed's polling of its counters).
 * Writes that settle usage (the ledger row and the key_usage totals, group-committed) are reported apart.
 *
 * Then the cache's freshness: a key disabled by the CLI (another process writing the same database) must be
 * refused, and accepted again once re-enabled, each within 1 s of the CLI command returning.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ScenarioResult } from "./report";
import { median, spread, summarizeSide } from "./report";
import { measuredRun, runProblems, type RunOptions } from "./run-pair";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { ROOT, createKey, gantryCli, sleep, startGantry, type Proc } from "./servers";

/**
 * Reads that a key check could make. Settlement writes (UPDATE key_usage, the ledger INSERT) are counted apart.
 * The change feed reads its counters with one statement whose key is a bound parameter (`meta WHERE key = ?`),
 * so its polls of every topic are counted: an upper bound of the keys topic's share.
 */
const KEY_READ_SQL = /^(SELECT|WITH)\b.*\b(api_keys|key_usage|keys_generation|meta WHERE key = \?)/i;

async function sqlCounts(proc: Proc, file: string): Promise<Record<string, number>> {
  rmSync(file, { force: true });
  proc.proc.kill("SIGUSR2");
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(20);
  await sleep(20);
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
}

function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [sql, n] of Object.entries(b)) {
    const d = n - (a[sql] ?? 0);
    if (d > 0) out[sql] = d;
  }
  return out;
}

/** ms from `since` until `fetchStatus()` returns `want` (polled every 10 ms, up to 5 s). */
async function timeUntil(want: number, fetchStatus: () => Promise<number>, since: number): Promise<number> {
  while (performance.now() - since < 5000) {
    if ((await fetchStatus()) === want) return performance.now() - since;
    await sleep(10);
  }
  return Number.POSITIVE_INFINITY;
}

export async function runKeyCheck(upstreamBase: string, o: RunOptions, res: ScenarioResult): Promise<void> {
  const dataDir = join(o.workDir, "keycheck-data");
  mkdirSync(dataDir, { recursive: true });
  const key = await createKey(dataDir, "bench-keycheck");
  const countsFile = join(o.workDir, "sql-counts.json");
  const proc = await startGantry(o.workDir, {
    name: "gantry-sql-counted",
    dataDir,
    upstreamBase,
    logLevel: o.logLevel,
    cpus: o.serverCpus,
    preload: join(ROOT, "bench/sql-counter.ts"),
    env: { BENCH_SQL_COUNTS: countsFile },
  });
  res.target = proc.name;
  res.baseline = null;
  const auth = { Authorization: `Bearer ${key}` };
  try {
    const loads = [
      { label: "/v1/models", request: { method: "GET" as const, path: "/v1/models", headers: auth } },
      { label: "/v1/responses", request: { method: "POST" as const, path: "/v1/responses", body: RESPONSES_STREAM_BODY, headers: { ...auth, "Content-Type": "application/json" } } },
    ];
    const perRequest: number[] = [];
    for (const { label, request } of loads) {
      const probe = await fetch(proc.url + request.path, { method: request.method, headers: request.headers, body: (request as { body?: string }).body });
      await probe.text();
      if (probe.status !== 200) throw new Error(`${label} probe answered ${probe.status}`);
      const before = await sqlCounts(proc, countsFile);
      const { record } = await measuredRun(proc, "target", request, 50, o);
      const after = await sqlCounts(proc, countsFile);
      const problem = runProblems(record);
      if (problem) throw new Error(problem);
      res.runs.push(record);
      const d = diff(before, after);
      const keySql = Object.entries(d).filter(([sql]) => KEY_READ_SQL.test(sql)).reduce((n, [, c]) => n + c, 0);
      const allSql = Object.values(d).reduce((n, c) => n + c, 0);
      perRequest.push(keySql / record.requests);
      res.values[`${label}: requests`] = record.requests;
      res.values[`${label}: key-reading SQL statements (per request)`] = `${keySql} (${(keySql / record.requests).toFixed(5)})`;
      res.values[`${label}: all SQL statements (per request)`] = `${allSql} (${(allSql / record.requests).toFixed(3)})`;
      const top = Object.entries(d).sort((a, b) => b[1] - a[1]).slice(0, 4);
      res.values[`${label}: top statements`] = top.map(([sql, n]) => `${n}× ${sql.slice(0, 70)}`).join(" | ");
    }
    res.sides = { target: summarizeSide(res.runs) };
    const sp = spread(perRequest);
    res.values["key-sql-per-request"] = Math.max(...perRequest);
    res.values["key-sql-per-request:spread"] = JSON.stringify(sp);

    // Freshness of the cache, against changes made by another process (the CLI).
    const status = (secret: string) => async () => {
      const r = await fetch(proc.url + "/v1/models", { headers: { authorization: `Bearer ${secret}` } });
      await r.arrayBuffer();
      return r.status;
    };
    // Timed on an existing key (disable -> 403, enable -> 200): polling with a key the server does not know yet
    // would answer 401s, and the failed-key throttle rightly slows a client that collects those.
    const name = "bench-fresh";
    const created = JSON.parse(await gantryCli(["keys", "create", "--name", name, "--json"], dataDir)) as { key: string };
    const firstUse = performance.now();
    while ((await status(created.key)()) !== 200 && performance.now() - firstUse < 5000) await sleep(200);
    const disabledMs: number[] = [];
    const enabledMs: number[] = [];
    for (let i = 0; i < (o.quick ? 1 : 3); i++) {
      await gantryCli(["keys", "disable", name], dataDir);
      disabledMs.push(await timeUntil(403, status(created.key), performance.now()));
      await gantryCli(["keys", "enable", name], dataDir);
      enabledMs.push(await timeUntil(200, status(created.key), performance.now()));
    }
    const delays = [...disabledMs, ...enabledMs];
    res.values["disabled key refused after (ms)"] = disabledMs.map((d) => d.toFixed(0)).join(", ");
    res.values["re-enabled key accepted after (ms)"] = enabledMs.map((d) => d.toFixed(0)).join(", ");
    const ds = spread(delays);
    res.values["invalidation-ms"] = Math.max(...delays);
    res.values["invalidation-ms:spread"] = JSON.stringify(ds);
    res.values.summary = `median ${median(delays).toFixed(0)} ms from CLI exit to effect`;
  } finally {
    await proc.stop();
  }
}
