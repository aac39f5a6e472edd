/**
 * What a pool of several adds to a healthy call, in focused parts (bench/pool-failover.ts measures whole requests,
 * too noisy on a shared machine to size a few µs):
 *
 *   hold    the opening hold then the event source reading the bench's 20-delta stream in one chunk, against the
 *           event source alone (a pool of one), 20,000 streams a round
 *   state   a call's work on the in-process pool state: the health read, the choice, whether another account could
 *           take over, the success counted in the rolling window, 200,000 calls a round
 *
 * CPU µs, median of 5 rounds (after a warm-up).
 *   bun bench/pool-hold.ts            GANTRY_BENCH_SOURCE=/path/to/checkout bun bench/pool-hold.ts  (a baseline)
 */
import { join } from "node:path";
import { benchStreamFrames } from "./upstream-frames";
import { GANTRY_SOURCE } from "./servers";

const { holdOpening } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/opening-hold.ts"));
const { UpstreamEventSource, IDLE } = await import(join(GANTRY_SOURCE, "src/gateway/pipeline/event-source.ts"));
const { MemoryPoolState } = await import(join(GANTRY_SOURCE, "src/gateway/upstream/pool-state-memory.ts"));
const rules = await import(join(GANTRY_SOURCE, "src/gateway/upstream/rules/choose-account.ts"));

const bytes = new TextEncoder().encode(benchStreamFrames().join(""));
const body = () => new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes.slice()); c.close(); } });
async function drain(b: unknown): Promise<void> {
  const source = new UpstreamEventSource(b, 60_000);
  for await (const batch of source.read()) if (batch === IDLE) throw new Error("idle");
  if (!source.terminal) throw new Error("no terminal event");
}
const held = async () => {
  const h = await holdOpening(body(), 1 << 20, 60_000);
  if (!h.committed) throw new Error("not committed");
  await drain(h.body);
};
const bare = () => drain(body());

const account = (name: string, priority: number) => ({ name, baseUrl: "http://x/v1", apiKey: "k", models: ["*"], modelMap: {}, priority, weight: 1, maxConcurrency: null });
const accounts = [account("a", 1), account("b", 2)];
const names = ["a", "b"];
const state = new MemoryPoolState();
async function stateCall(): Promise<void> {
  const health = await state.read(names);
  const nowMs = Date.now();
  const tried = new Set<string>();
  const choice = rules.chooseAccount({ accounts, health, model: "m", nowMs, tried, pinned: null, affinity: null, random: Math.random() });
  tried.add(choice.account.name);
  // The checkout before anyUsable asked a second choice.
  const more = rules.anyUsable ? rules.anyUsable({ accounts, health, model: "m", nowMs, tried }) : rules.chooseAccount({ accounts, health, model: "m", nowMs, tried, random: 0 }).account !== null;
  if (!more) throw new Error("no other account");
  void state.recordOutcome(choice.account.name, false, Date.now(), 60_000);
}

async function cpu(fn: () => Promise<void>, n: number): Promise<number> {
  Bun.gc(true);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await cpu(held, 20_000), await cpu(bare, 20_000), await cpu(stateCall, 200_000);
const hold: number[] = [];
const stateUs: number[] = [];
for (let r = 0; r < 5; r++) {
  hold.push((await cpu(held, 20_000)) - (await cpu(bare, 20_000)));
  stateUs.push(await cpu(stateCall, 200_000));
}
process.stdout.write(`${GANTRY_SOURCE}\n`);
process.stdout.write(`hold   ${median(hold).toFixed(2)} µs a stream over the event source alone  (${hold.map((x) => x.toFixed(1)).join(", ")})\n`);
process.stdout.write(`state  ${median(stateUs).toFixed(2)} µs a call  (${stateUs.map((x) => x.toFixed(2)).join(", ")})\n`);
