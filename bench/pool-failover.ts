/**
 * What a failover costs Gantry, and what the Redis pool state costs a call: whole gateway requests handled in this
 * process (createDeps + createApp, as bench/inproc.ts), their upstream a real HTTP server in another process
 * (bench/upstream-server.ts), so an upstream attempt costs here what it costs a server: a POST on a socket and its
 * reply read. CPU per request (this process only; the upstream's is not counted), scenarios alternated round by
 * round so a busy machine weighs on all alike, medians of the rounds:
 *
 *   healthy          a pool of one healthy account
 *   healthy-two      a pool of two healthy accounts (the choice of an account, and its success recorded)
 *   failover-503     a pool of two: account a (tried first) answers 503 every call, b answers
 *   failover-event   the same, a's stream being response.created then an `error` event
 *   attempt-503      the bare cost of one upstream attempt: a POST of the same body to a's URL, its 503 read
 *   attempt-event    the same against the failing stream
 *   client-503       the same attempt through Gantry's upstream client (its first-byte deadline, the error body read
 *                    within a bound, the refusal built), which is what a failover adds
 *   redis-healthy    the pool of one with GANTRY_REDIS_URL (a redis-server started for the run; its CPU shown apart);
 *                    the limiter stays in process, so the difference is the pool state's (in-flight up and down)
 *
 * a would cool after a few failures (the rolling window) and the calls go straight to b: to measure a failover on
 * every call, a is put back (`enable`, a Map delete in process) before each request of the failover scenarios;
 * `enable-only` measures that alone, to subtract.
 *   bun bench/pool-failover.ts [--requests N] [--rounds R] [--concurrency C] [--no-redis] [--only a,b]
 * GANTRY_BENCH_SOURCE=/path/to/checkout measures another checkout's src/ (for a before/after).
 */
import { mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { cpuSeconds } from "./proc-stats";
import { GANTRY_SOURCE, startUpstream } from "./servers";
import { startRedisServer, redisUnavailable } from "../tests/support/redis";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { requests: { type: "string" }, rounds: { type: "string" }, concurrency: { type: "string" }, "no-redis": { type: "boolean" }, only: { type: "string" } },
});
const N = Number(values.requests ?? 3000);
const R = Number(values.rounds ?? 5);
const C = Number(values.concurrency ?? 16);

const { configFrom } = await import(join(GANTRY_SOURCE, "src/cli/common.ts"));
const { createDeps } = await import(join(GANTRY_SOURCE, "src/deps.ts"));
const { createApp } = await import(join(GANTRY_SOURCE, "src/app.ts"));
const { createLogger } = await import(join(GANTRY_SOURCE, "src/log.ts"));
const { InProcessLimiter } = await import(join(GANTRY_SOURCE, "src/gateway/limits/limiter.ts"));
const { Upstream } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/upstream.ts"));

const work = mkdtempSync(join(tmpdir(), "gantry-pool-failover-"));
const upstream = await startUpstream(work, null);
const redis = values["no-redis"] || redisUnavailable() ? null : await startRedisServer();
const UNKEPT = RESPONSES_STREAM_BODY.replace('"stream":true', '"stream":true,"store":false');

type Gateway = { handle: (r: Request) => Promise<Response>; key: string; close: () => void; enableA: () => Promise<void> };

async function gateway(name: string, accounts: Array<{ name: string; path: string; priority: number }>, redisUrl?: string): Promise<Gateway> {
  const dataDir = join(work, name);
  const upstreams = JSON.stringify(accounts.map((a) => ({ name: a.name, url: `${upstream.url}${a.path}/v1`, key: "bench-upstream-key", models: ["*"], priority: a.priority, weight: 1 })));
  const config = configFrom({ "data-dir": dataDir, upstreams, "admin-token": "bench-admin-token-0123456789", "log-level": "info", ...(redisUrl ? { "redis-url": redisUrl } : {}) });
  const logFd = openSync(join(work, `${name}.log`), "a");
  const log = createLogger(config.logLevel, (line: string) => void writeSync(logFd, line + "\n"), false);
  // The limiter in process whatever the settings: with Redis, only the pool's state (and nothing a call uses besides) goes there.
  const deps = await createDeps(config, { log, limiter: new InProcessLimiter() });
  const created = await deps.keys.create({ name: "bench" });
  await deps.keyCache.reload();
  const app = createApp(deps);
  return { handle: (r) => app.handle(r), key: created.secret, close: () => deps.close(), enableA: () => deps.poolState.enable("a") };
}

const one = await gateway("healthy", [{ name: "a", path: "", priority: 1 }]);
const two = await gateway("healthy-two", [{ name: "a", path: "", priority: 1 }, { name: "b", path: "", priority: 2 }]);
const f503 = await gateway("failover-503", [{ name: "a", path: "/fail-503", priority: 1 }, { name: "b", path: "", priority: 2 }]);
const fEvent = await gateway("failover-event", [{ name: "a", path: "/fail-event", priority: 1 }, { name: "b", path: "", priority: 2 }]);
const onRedis = redis ? await gateway("redis-healthy", [{ name: "a", path: "", priority: 1 }], redis.url) : null;

const call = (g: Gateway) => async () => {
  const res = await g.handle(new Request("http://127.0.0.1/v1/responses", { method: "POST", headers: { authorization: `Bearer ${g.key}`, "content-type": "application/json" }, body: UNKEPT }));
  const text = await res.text();
  if (res.status !== 200 || !text.includes("response.completed")) throw new Error(`status ${res.status}: ${text.slice(0, 300)}`);
};
const failing = (g: Gateway) => {
  const c = call(g);
  return async () => {
    await g.enableA();
    await c();
  };
};
const attempt = (path: string, status: number) => async () => {
  const res = await fetch(`${upstream.url}${path}/v1/responses`, { method: "POST", headers: { authorization: "Bearer bench-upstream-key", "content-type": "application/json" }, body: UNKEPT });
  await res.arrayBuffer();
  if (res.status !== status) throw new Error(`attempt: status ${res.status}`);
};

const client503 = new Upstream({ baseUrl: `${upstream.url}/fail-503/v1`, apiKey: "bench-upstream-key", connectTimeoutMs: 10_000, firstByteTimeoutMs: 30_000, idleTimeoutMs: 300_000, retries: 0 });
const viaClient = async () => {
  const refused = await client503.postResponses(UNKEPT, new AbortController().signal).then(() => null, (err: unknown) => err);
  if (refused === null) throw new Error("client-503: not refused");
};

const scenarios: Record<string, () => Promise<void>> = {
  healthy: call(one),
  "healthy-two": call(two),
  "failover-503": failing(f503),
  "failover-event": failing(fEvent),
  "attempt-503": attempt("/fail-503", 503),
  "attempt-event": attempt("/fail-event", 200),
  "client-503": viaClient,
  "enable-only": () => f503.enableA(),
  ...(onRedis ? { "redis-healthy": call(onRedis) } : {}),
};

async function cpuPerRequest(fn: () => Promise<void>): Promise<{ us: number; redisUs: number | null }> {
  let next = 0;
  Bun.gc(true);
  const r0 = redis ? cpuSeconds(redis.pid()) : 0;
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async () => { while (next++ < N) await fn(); }));
  const c = process.cpuUsage(c0);
  return { us: (c.user + c.system) / N, redisUs: redis ? ((cpuSeconds(redis.pid()) - r0) * 1e6) / N : null };
}

const only = values.only?.split(",");
if (only) for (const name of Object.keys(scenarios)) if (!only.includes(name)) delete scenarios[name];
const results: Record<string, number[]> = {};
const redisCpu: number[] = [];
for (const fn of Object.values(scenarios)) await cpuPerRequest(fn); // warm-up
for (let r = 0; r < R; r++) {
  for (const [name, fn] of Object.entries(scenarios)) {
    const m = await cpuPerRequest(fn);
    (results[name] ??= []).push(m.us);
    if (name === "redis-healthy" && m.redisUs !== null) redisCpu.push(m.redisUs);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `${median(xs).toFixed(1).padStart(7)} µs  (${xs.map((x) => x.toFixed(1)).join(", ")})`;
process.stdout.write(`${GANTRY_SOURCE}\n`);
process.stdout.write(`CPU per request, this process, ${N} requests a round, ${C} at a time, median of ${R} rounds\n`);
for (const [name, xs] of Object.entries(results)) process.stdout.write(`${name.padEnd(16)}${fmt(xs)}\n`);
if (redisCpu.length) process.stdout.write(`${"redis-server".padEnd(16)}${fmt(redisCpu)}  (its own CPU per redis-healthy request)\n`);
// Differences paired by round (the scenarios of a round ran one after the other, under the same load), then their median.
const diff = (a: string, b: string) => (results[a] && results[b] ? median(results[a]!.map((x, i) => x - results[b]![i]!)) : NaN);
const m = (k: string) => median(results[k] ?? [NaN]);
const enable = m("enable-only");
const line = (text: string) => process.stdout.write(`${text}\n`);
line("differences, paired by round, median:");
line(`  healthy-two - healthy:            ${diff("healthy-two", "healthy").toFixed(1)} µs (a pool of two: the choice, the hold of the opening events, the success recorded)`);
line(`  failover-503 - healthy-two:       ${(diff("failover-503", "healthy-two") - enable).toFixed(1)} µs vs one attempt-503 ${m("attempt-503").toFixed(1)} µs`);
line(`  failover-event - healthy-two:     ${(diff("failover-event", "healthy-two") - enable).toFixed(1)} µs vs one attempt-event ${m("attempt-event").toFixed(1)} µs`);
line(`  failover-503 - healthy:           ${(diff("failover-503", "healthy") - enable).toFixed(1)} µs`);
line(`  failover-event - healthy:         ${(diff("failover-event", "healthy") - enable).toFixed(1)} µs`);
if (results["redis-healthy"]) line(`  redis-healthy - healthy:          ${diff("redis-healthy", "healthy").toFixed(1)} µs in this process, plus ${median(redisCpu).toFixed(1)} µs in redis-server`);

for (const g of [one, two, f503, fEvent, onRedis]) g?.close();
await upstream.stop();
await redis?.stop();
rmSync(work, { recursive: true, force: true });
process.exit(0);
