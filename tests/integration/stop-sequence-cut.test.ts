/**
 * A stop sequence ends the upstream call, not only the caller's reply (POST /v1/messages, streamed and collected):
 * against a fake upstream that streams a long reply slowly, the upstream sees its request cancelled soon after the
 * sequence, the ledger bills what was produced until then (status 200, error code `stop_sequence`, estimated), and
 * the key's concurrency slot is free as soon as the caller has its answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { tokensOfBytes } from "../../src/gateway/wire/token-counts";

let upstream: FakeUpstream;
let g: Gantry;

/** 400 deltas 25 ms apart: the whole reply takes ten seconds; the sequence is in its first few deltas. */
const TAIL = "lorem ipsum dolor sit amet ".repeat(80);
const TEXT = "alpha beta ###END### " + TAIL;
const DELTAS = 400;
const FULL_OUTPUT_TOKENS = tokensOfBytes(Buffer.byteLength(TEXT));

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

async function newKey(): Promise<{ key: string; id: string }> {
  const name = `stopcut-${Math.random().toString(36).slice(2)}`;
  // One slot: the next call of the key is admitted only if this one's came back.
  const key = await g.createKey({ name, concurrency: 1 });
  return { key, id: (await g.deps.keys.get(name))!.id };
}

function post(key: string, body: unknown): Promise<Response> {
  return fetch(g.url + "/v1/messages", {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": key },
    body: JSON.stringify(body),
  });
}

const request = { model: "gpt-5", max_tokens: 4096, stop_sequences: ["###END###"], messages: [{ role: "user", content: "hi" }] };

for (const stream of [true, false]) {
  describe(`stream: ${stream}`, () => {
    test("the upstream is cut at the sequence, billed for what it produced, and the slot is free at once", async () => {
      upstream.setScenario({ kind: "slow", delayMs: 25, text: TEXT, deltas: DELTAS });
      try {
        const { key, id } = await newKey();
        const aborted = upstream.aborted;
        const started = performance.now();
        const res = await post(key, { ...request, stream });
        expect(res.status).toBe(200);
        const body = await res.text();
        const tookMs = performance.now() - started;
        if (stream) {
          expect(body).toContain('"stop_reason":"stop_sequence"');
          expect(body.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
        } else {
          const message = JSON.parse(body);
          expect(message).toMatchObject({ content: [{ type: "text", text: "alpha beta " }], stop_reason: "stop_sequence", stop_sequence: "###END###" });
          // What was produced until the cut, estimated: some output, far below the whole reply's.
          expect(message.usage.output_tokens).toBeGreaterThan(0);
          expect(message.usage.output_tokens).toBeLessThan(FULL_OUTPUT_TOKENS / 5);
        }
        // The answer came long before the upstream's ten seconds.
        expect(tookMs).toBeLessThan(5000);
        // The slot came back before the answer's last byte: a second call of the one-slot key is admitted now.
        expect(g.deps.limiter.inFlight(id)).toBe(0);
        const row = (await g.deps.ledger.recent(1, id))[0]!;
        expect(row).toMatchObject({ endpoint: "messages", status: 200, errorCode: "stop_sequence" });
        expect(row.outputTokens).toBeGreaterThan(0);
        expect(row.outputTokens).toBeLessThan(FULL_OUTPUT_TOKENS / 5);
        // The upstream learns of the cancel a moment later (its side of the connection).
        await pollUntil(() => upstream.open === 0 && upstream.aborted === aborted + 1, Boolean, { what: "the upstream to see its request cancelled" });
        upstream.setScenario();
        const next = await post(key, { ...request, stream: false });
        expect(next.status).toBe(200);
        expect((await next.json()).stop_reason).toBe("end_turn");
      } finally {
        upstream.setScenario();
      }
    }, 30_000);
  });
}

test("a reply that ends before its sequence appears is billed the upstream's usage, as without stop sequences", async () => {
  upstream.setScenario({ kind: "text", text: "no sequence here", usage: { output_tokens: 7 } });
  try {
    const { key, id } = await newKey();
    for (const stream of [true, false]) {
      const res = await post(key, { ...request, stream });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("end_turn");
      const row = (await g.deps.ledger.recent(1, id))[0]!;
      expect(row).toMatchObject({ status: 200, errorCode: null, outputTokens: 7 });
    }
  } finally {
    upstream.setScenario();
  }
});
