/**
 * What a failover costs the pool itself, without sockets (so without the noise of a loaded machine's network
 * stack): a pool of two whose first account's client refuses every call as the real client does after reading a
 * 503 (`mapUpstreamError` on its short JSON body) or answers with `response.created` then an `error` event, the
 * second answering, against the same pool where the first account answers. CPU per call, alternating rounds,
 * medians. The difference is everything a failover adds but the HTTP exchange of the failed attempt: the error,
 * the account's failure recorded, its log line, the choice made again, the hold of the failed stream.
 *   bun bench/failover-overhead.ts [--calls N] [--rounds R]
 * GANTRY_BENCH_SOURCE=/path/to/checkout measures another checkout's src/.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchStreamFrames } from "./upstream-frames";
import { GANTRY_SOURCE } from "./servers";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { calls: { type: "string" }, rounds: { type: "string" } } });
const N = Number(values.calls ?? 20_000);
const R = Number(values.rounds ?? 5);

const { UpstreamPool } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/pool.ts"));
const { MemoryPoolState } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/pool-state-memory.ts"));
const { NO_POOL_EVENTS } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/pool-setup.ts"));
const { ParameterQuirks } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/unsupported-params.ts"));
const { mapUpstreamError } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/upstream-errors.ts"));
const { createLogger } = await import(join(GANTRY_SOURCE, "src/log.ts"));

const enc = new TextEncoder();
const STREAM = enc.encode(benchStreamFrames().join(""));
const FAIL_EVENT = enc.encode(
  `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_fail", object: "response", status: "in_progress", output: [] } })}\n\n` +
    `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: 1, code: "server_error", message: "The server had an error.", param: null })}\n\n`,
);
const BODY_503 = JSON.stringify({ error: { message: "The server is overloaded.", type: "server_error", code: null, param: null } });

const reply = (bytes: Uint8Array<ArrayBuffer>) => ({ response: new Response(bytes, { headers: { "content-type": "text/event-stream" } }), ttfbMs: 1 });
const clients = {
  ok: { postResponses: async () => reply(STREAM) },
  503: { postResponses: async () => { throw mapUpstreamError(503, BODY_503, null, new Headers()); } },
  event: { postResponses: async () => reply(FAIL_EVENT) },
};
const account = (name: string, priority: number) => ({ name, baseUrl: `http://${name}/v1`, apiKey: "k", models: ["*"], modelMap: {}, priority, weight: 1, maxConcurrency: null });
// The real logger, its lines thrown away: a failover writes one.
const log = createLogger("info", () => {}, false);
const quirks = new ParameterQuirks([]);

function poolOf(first: keyof typeof clients) {
  const state = new MemoryPoolState();
  const pool = new UpstreamPool({
    accounts: [account("a", 1), account("b", 2)],
    clientOf: (a: { name: string }) => (a.name === "a" ? clients[first] : clients.ok),
    state,
    events: NO_POOL_EVENTS,
    quirks,
    quirksOf: () => quirks,
    log,
    now: Date.now,
    maxEventBytes: 1 << 23,
    holdQuietMs: 15_000,
  });
  return { pool, state };
}
const request = { model: "gpt-5.4", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], stream: true };
const signal = new AbortController().signal;

function scenario(first: keyof typeof clients) {
  const { pool, state } = poolOf(first);
  return async () => {
    // a would rest after a few failures (the rolling window): put it back so every call fails over.
    if (first !== "ok") await state.enable("a");
    const r = await pool.post({ model: "gpt-5.4", request, signal, affinity: "key", requestId: "req" });
    if (r.account.name !== "b" && first !== "ok") throw new Error("no failover");
    r.release();
    await (r.body instanceof ReadableStream ? r.body.cancel() : r.body.reader.cancel());
  };
}

async function cpuPerCall(fn: () => Promise<void>): Promise<number> {
  Bun.gc(true);
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn();
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / N;
}

const runs = { healthy: scenario("ok"), "failover-503": scenario(503), "failover-event": scenario("event") };
const out: Record<string, number[]> = {};
for (const fn of Object.values(runs)) await cpuPerCall(fn);
for (let r = 0; r < R; r++) for (const [name, fn] of Object.entries(runs)) (out[name] ??= []).push(await cpuPerCall(fn));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(`${GANTRY_SOURCE}: a pool of two, ns CPU per call, median of ${R} rounds of ${N}\n`);
for (const [name, xs] of Object.entries(out)) process.stdout.write(`${name.padEnd(15)} ${median(xs).toFixed(0).padStart(7)}  (${xs.map((x) => x.toFixed(0)).join(", ")})\n`);
for (const k of ["failover-503", "failover-event"]) process.stdout.write(`${k} - healthy: ${(median(out[k]!) - median(out.healthy!)).toFixed(0)} ns\n`);
process.exit(0);
