/**
 * The chat stream as the pipeline writes it (text deltas framed from a template, opening events translated from
 * their type alone, plain text deltas read off their JSON text without parsing) is byte for byte the chat stream
 * that serialising every chunk object gives.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { encodeData } from "../../src/gateway/wire/sse-encode";
import { readTextDelta } from "../../src/gateway/wire/delta-text";
import { OPENING_TYPES, TEXT_DELTA } from "../../src/gateway/wire/stream-event";
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

/** As the chat sink does with an unread text delta: its fields read off its JSON text when they are plain. */
function asText(events: ResponsesStreamEvent[], opts: Parameters<typeof createChatStreamTranslator>[0]): { out: string; read: number } {
  const t = createChatStreamTranslator(opts);
  let out = "";
  let read = 0;
  for (const ev of events) {
    const fields = ev?.type === TEXT_DELTA ? readTextDelta(JSON.stringify(ev)) : null;
    if (fields !== null) read++;
    const opening = typeof ev?.type === "string" && OPENING_TYPES.has(ev.type) ? t.pushOpening(ev.type) : null;
    out += fields !== null ? t.pushTextDelta(fields) : (opening ?? t.pushEncoded(structuredClone(ev)));
  }
  return { out: out + t.finish().map((o) => encodeData(o)).join(""), read };
}

test("modelled and damaged streams: the same bytes", () => {
  const streams = fc.oneof(streamSpec.map((s) => eventsOf(s)), anyEvents);
  let read = 0;
  fc.assert(
    fc.property(streams, options, (events, opts) => {
      const whole = asObjects(events, opts);
      expect(asPipeline(events, opts)).toBe(whole);
      const text = asText(events, opts);
      read += text.read;
      expect(text.out).toBe(whole);
    }),
    { numRuns: 500 },
  );
  // The text reading was exercised, not always given up.
  expect(read).toBeGreaterThan(200);
});
