/**
 * The chat stream as the pipeline writes it (text deltas framed from a template, opening events translated from
 * their type alone) is byte for byte the chat stream that serialising every chunk object gives.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { ResponsesStreamEvent } from "../../src/gateway/responses-types";
import { encodeData } from "../../src/gateway/stream/sse/encode";
import { OPENING_TYPES } from "../../src/gateway/stream/stream-event";
import { createChatStreamTranslator } from "../../src/gateway/translate/stream-to-chat";
import { anyEvents, eventsOf, streamSpec } from "./responses-stream-model";
import { trickyString } from "./arbitraries";

const options = fc.record({ id: trickyString, created: fc.integer({ min: 0, max: 2 ** 40 }), model: trickyString, includeUsage: fc.boolean() });

function asObjects(events: ResponsesStreamEvent[], opts: Parameters<typeof createChatStreamTranslator>[0]): string {
  const t = createChatStreamTranslator(opts);
  const objs = [...events.flatMap((ev) => t.push(structuredClone(ev))), ...t.finish()];
  return objs.map((o) => encodeData(o)).join("");
}

function asPipeline(events: ResponsesStreamEvent[], opts: Parameters<typeof createChatStreamTranslator>[0]): string {
  const t = createChatStreamTranslator(opts);
  let out = "";
  for (const ev of events) {
    const opening = typeof ev?.type === "string" && OPENING_TYPES.has(ev.type) ? t.pushOpening(ev.type) : null;
    out += opening ?? t.pushEncoded(structuredClone(ev));
  }
  return out + t.finish().map((o) => encodeData(o)).join("");
}

test("modelled and damaged streams: the same bytes", () => {
  const streams = fc.oneof(streamSpec.map((s) => eventsOf(s)), anyEvents);
  fc.assert(fc.property(streams, options, (events, opts) => expect(asPipeline(events, opts)).toBe(asObjects(events, opts))), { numRuns: 500 });
});
