/** The fake upstream's fixed 20-delta Responses stream, as SSE frames (fixed id and timestamp: identical bytes every run). */
import { buildResponseEvents, encodeEventFrames } from "../src/gateway/simulator/events";

export const BENCH_TEXT =
  "Gantry relays this answer from a fake upstream so the benchmark measures the gateway and nothing else at all today.";

export function benchStreamFrames(model = "demo-mini"): string[] {
  const events = buildResponseEvents({
    id: "resp_bench000000000000000000000000000000000000000000",
    model,
    createdAt: 1_760_000_000,
    text: BENCH_TEXT,
    deltas: 20,
    usage: { input_tokens: 12 },
  });
  return encodeEventFrames(events);
}
