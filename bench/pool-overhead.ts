/**
 * What the upstream pool adds to a call in a pool of one, measured alone: `postResponses` straight to a client that
 * answers at once, against the same through `UpstreamPool.post` (choice skipped, no hold; the in-flight count and
 * the events it keeps). CPU per call, alternating rounds so a busy machine weighs on both alike.
 *   bun bench/pool-overhead.ts [--calls N] [--rounds R]
 */
import { parseArgs } from "node:util";
import { UpstreamPool } from "../src/gateway/upstream/pool";
import { MemoryPoolState } from "../src/gateway/upstream/pool-state-memory";
import { NO_POOL_EVENTS } from "../src/gateway/upstream/pool-setup";
import { postResponses } from "../src/gateway/upstream/post-responses";
import { ParameterQuirks } from "../src/gateway/upstream/unsupported-params";
import { silentLogger } from "../src/log";
import type { UpstreamAccount } from "../src/gateway/upstream/pool-port";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { calls: { type: "string" }, rounds: { type: "string" } } });
const N = Number(values.calls ?? 200_000);
const R = Number(values.rounds ?? 5);

const reply = { response: new Response("data: {}\n\n"), ttfbMs: 1 };
const client = { postResponses: async () => reply };
const quirks = new ParameterQuirks([]);
const account: UpstreamAccount = { name: "default", baseUrl: "http://x/v1", apiKey: "k", models: ["*"], modelMap: {}, priority: 1, weight: 1, maxConcurrency: null };
const pool = new UpstreamPool({ accounts: [account], clientOf: () => client, state: new MemoryPoolState(), events: NO_POOL_EVENTS, quirksOf: () => quirks, log: silentLogger, now: Date.now, maxEventBytes: 1 << 23, holdQuietMs: 15_000 });
const request = { model: "gpt-5.4", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], stream: true };
const signal = new AbortController().signal;

async function direct(): Promise<void> {
  await postResponses({ upstream: client, quirks }, "gpt-5.4", request, signal);
}
async function pooled(): Promise<void> {
  const r = await pool.post({ model: "gpt-5.4", request, signal, affinity: "key", requestId: "req" });
  r.release();
}

async function cpuPerCall(fn: () => Promise<void>): Promise<number> {
  Bun.gc(true);
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn();
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / N;
}

await cpuPerCall(direct);
await cpuPerCall(pooled);
const d: number[] = [];
const p: number[] = [];
for (let r = 0; r < R; r++) {
  d.push(await cpuPerCall(direct));
  p.push(await cpuPerCall(pooled));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(`postResponses direct: ${median(d).toFixed(0)} ns CPU/call (${d.map((x) => x.toFixed(0)).join(", ")})\n`);
process.stdout.write(`through a pool of one: ${median(p).toFixed(0)} ns CPU/call (${p.map((x) => x.toFixed(0)).join(", ")})\n`);
process.stdout.write(`added: ${(median(p) - median(d)).toFixed(0)} ns per call\n`);
