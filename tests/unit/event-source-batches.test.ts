/**
 * What the event source holds at once: a large chunk from the upstream is read in batches of at most 16 KiB of its
 * bytes (a batch and what the caller gets of it wait whole while the caller's socket is full), nothing lost or
 * reordered; the deltas kept unmeasured for an estimate are measured in rounds, the estimate the same.
 */
import { expect, test } from "bun:test";
import { UpstreamEventSource, IDLE, type UpstreamEvent } from "../../src/gateway/pipeline/event-source";
import { tokensOfBytes } from "../../src/gateway/limits/rules/quota";

const DELTAS = 4000;
const frame = (ev: { type: string; [k: string]: unknown }) => `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;

function oneChunkBody(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

test("one large chunk: batches of at most 16 KiB of it, every event in order; the estimate counts every delta", async () => {
  let text = frame({ type: "response.created", sequence_number: 0, response: { id: "r", status: "in_progress", output: [] } });
  for (let i = 1; i <= DELTAS; i++) text += frame({ type: "response.output_text.delta", sequence_number: i, item_id: "m", output_index: 0, content_index: 0, delta: "wörd " });
  expect(text.length).toBeGreaterThan(16 * 1024 * 20);
  const source = new UpstreamEventSource(oneChunkBody(text), 60_000);
  const batches: UpstreamEvent[][] = [];
  for await (const batch of source.read()) if (batch !== IDLE) batches.push(batch);

  const events = batches.flat();
  expect(events.map((e) => e.type)).toEqual(["response.created", ...Array(DELTAS).fill("response.output_text.delta")]);
  expect(events.map((e) => JSON.parse(e.data!).sequence_number)).toEqual([...Array(DELTAS + 1).keys()]);
  // Each batch holds what 16 KiB of the stream carry (an event cut by a slice's end goes with the next one).
  const largest = Math.max(...batches.map((b) => b.reduce((n, e) => n + frame(JSON.parse(e.data!)).length, 0)));
  expect(largest).toBeLessThanOrEqual(16 * 1024 + 200);
  expect(batches.length).toBeGreaterThanOrEqual(Math.floor(Buffer.byteLength(text) / (16 * 1024)));
  // "wörd " is 6 UTF-8 bytes; measured in rounds (past 64 Ki characters of deltas) or at the end, the same sum.
  expect(source.estimate().outputTokens).toBe(tokensOfBytes(DELTAS * 6));
});
