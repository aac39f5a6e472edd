/**
 * Forwarding unchanged deltas unparsed (the pipeline's way) gives the caller exactly the stream that reading every
 * event gives, whatever the stream: markup split anywhere, several items and parts, damaged streams.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { TERMINAL_EVENT_TYPES, type ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { rewriteSkipping } from "../support/rewrite-skipping";
import { createResponsesStreamRewriter } from "../../src/gateway/wire/stream-rewrite";
import { anyEvents, eventsOf, streamSpec } from "./responses-stream-model";

const TOOLS = new Set(["tool", "get_weather"]);
const MARKUP = fc.constantFrom("<tool_use>", '{"name":"tool","arguments":{}}', "</tool_use>", "<tool", "_call>", '{"name":"get_weather"}', "</tool_call>", "ok ", "x");

function counter(): () => string {
  let n = 0;
  return () => `t${++n}`;
}

function readingEvery(events: ResponsesStreamEvent[]): ResponsesStreamEvent[] {
  const rw = createResponsesStreamRewriter({ toolNames: TOOLS, makeId: counter() });
  const out = events.flatMap((ev) => rw.push(structuredClone(ev)));
  return [...out, ...rw.finish()].map((ev) => JSON.parse(JSON.stringify(ev)));
}

function skipping(events: ResponsesStreamEvent[], maxSkippedChars?: number): ResponsesStreamEvent[] {
  const rw = createResponsesStreamRewriter({ toolNames: TOOLS, makeId: counter(), maxSkippedChars });
  return rewriteSkipping(events, rw).map((ev) => JSON.parse(JSON.stringify(ev)));
}

/** A message whose text deltas are drawn from plain text and pieces of tool markup. */
const markupStream = fc.array(fc.array(fc.oneof(MARKUP, fc.constantFrom("Hello", " ", "wörld", "<b>", "1 < 2")), { maxLength: 8 }), { minLength: 1, maxLength: 3 }).map((messages) => {
  const events: ResponsesStreamEvent[] = [{ type: "response.created", response: { id: "resp_1", output: [], status: "in_progress" } }];
  messages.forEach((deltas, i) => {
    const id = `msg_${i}`;
    const full = deltas.join("");
    events.push({ type: "response.output_item.added", output_index: i, item: { id, type: "message", role: "assistant", content: [] } });
    for (const d of deltas) events.push({ type: "response.output_text.delta", item_id: id, output_index: i, content_index: 0, delta: d });
    events.push({ type: "response.output_text.done", item_id: id, output_index: i, content_index: 0, text: full });
    events.push({ type: "response.output_item.done", output_index: i, item: { id, type: "message", role: "assistant", content: [{ type: "output_text", text: full }] } });
  });
  events.push({ type: "response.completed", response: { id: "resp_1", status: "completed", output: [] } });
  events.forEach((ev, n) => (ev.sequence_number = n));
  return events;
});

test("streams with tool markup: the same events, numbered the same", () => {
  fc.assert(fc.property(markupStream, (events) => expect(skipping(events)).toEqual(readingEvery(events))), { numRuns: 500 });
});

test("modelled streams, valid or damaged: the same events", () => {
  fc.assert(fc.property(streamSpec.map((s) => eventsOf(s)), (events) => expect(skipping(events)).toEqual(readingEvery(events))), { numRuns: 300 });
  // Events the upstream could not have sent as SSE (no type at all) fail the stream before any of this, and the
  // event source reads nothing after the terminal event: both left out.
  const readable = (events: ResponsesStreamEvent[]) => {
    const typed = events.filter((ev) => typeof ev.type === "string" && ev.type !== "");
    const end = typed.findIndex((ev) => TERMINAL_EVENT_TYPES.has(ev.type));
    return end < 0 ? typed : typed.slice(0, end + 1);
  };
  fc.assert(fc.property(anyEvents.map(readable), (events) => expect(skipping(events)).toEqual(readingEvery(events))), { numRuns: 300 });
});

test("skipped events replayed early, whenever they pass a bound (what keeps a long reply's memory flat): the same events", () => {
  // Bounds from none at all (every skipped event replayed at once) to a few events' text.
  const bound = fc.integer({ min: 0, max: 600 });
  fc.assert(fc.property(markupStream, bound, (events, max) => expect(skipping(events, max)).toEqual(readingEvery(events))), { numRuns: 500 });
  fc.assert(fc.property(streamSpec.map((s) => eventsOf(s)), bound, (events, max) => expect(skipping(events, max)).toEqual(readingEvery(events))), { numRuns: 300 });
});
