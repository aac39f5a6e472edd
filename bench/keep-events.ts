/**
 * What a kept stream's event work costs over the same stream with `store: false`, with nothing written: the
 * conversation built, the Responses sink with its keeper (ids learnt and replaced, the output gathered) and the kept
 * response made from the terminal event, for the bench stream's 28 events, in one process, best of 8 rounds.
 *   bun bench/keep-events.ts            GANTRY_BENCH_SOURCE=/path/to/checkout bun bench/keep-events.ts
 */
import { join } from "node:path";
import { benchStreamFrames } from "./upstream-frames";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { GANTRY_SOURCE } from "./servers";

const SRC = GANTRY_SOURCE;
const src = (p: string) => import(join(SRC, "src", p));
const { createSseDecoder } = await src("gateway/wire/sse-decode.ts");
const { classify } = await src("gateway/wire/stream-event.ts");
const { ResponsesSink } = await src("gateway/dialects/responses/responses-sink.ts");
const { ResponseKeeper } = await src("gateway/responses/response-keeper.ts");
const { buildConversation } = await src("gateway/responses/conversation.ts");
const bytes = new TextEncoder().encode(benchStreamFrames().join(""));
/** A repository that stores nothing: the write is bench/store-rows.ts's subject. */
const repo: any = { put: async () => {}, get: async () => null, itemSizes: async () => new Map(), items: async () => new Map() };
const deps: any = { responses: repo, config: { storedResponsesDays: 30, storedResponsesPerKey: 20000, storedBytesPerKey: 1 << 29 }, now: () => Date.now() };
async function one(kept: boolean) {
  let keeper = null;
  if (kept) {
    const body = JSON.parse(RESPONSES_STREAM_BODY);
    const conv = await buildConversation(repo, "k", body, Date.now(), { maxBytes: 1 << 20, bodyBytes: 100, maxItems: 1000 });
    keeper = new ResponseKeeper(deps, "k", "demo-mini", conv, true);
  }
  const dec = createSseDecoder();
  const evs = dec.push(bytes).concat(dec.end()).map((s: any) => classify(s)).filter((e: any) => e !== "done");
  const source: any = { ended: false, terminal: true, snapshot: {} };
  const sink = new ResponsesSink({ startedAtMs: 0 }, source, new Set(), keeper);
  let out = sink.push(evs);
  source.ended = true;
  out += sink.end(null).out;
  await sink.beforeSettle();
  return out.length;
}
for (const kept of [true, false]) for (let i = 0; i < 3000; i++) await one(kept);
const res: Record<string, number[]> = { kept: [], unkept: [] };
for (let r = 0; r < 8; r++) for (const kept of [true, false]) {
  const N = 3000; const t = performance.now();
  for (let i = 0; i < N; i++) await one(kept);
  res[kept ? "kept" : "unkept"]!.push((performance.now() - t) * 1000 / N);
}
const best = (xs: number[]) => Math.min(...xs);
console.log(`${SRC}: µs a request, kept`, best(res.kept!).toFixed(1), "unkept", best(res.unkept!).toFixed(1), "diff", (best(res.kept!) - best(res.unkept!)).toFixed(1));
