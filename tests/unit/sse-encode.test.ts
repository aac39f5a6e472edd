import { describe, expect, test } from "bun:test";
import { createSseDecoder, parseStreamEvent, type SseEvent } from "../../src/gateway/wire/sse-decode";
import { encodeData, encodeEvent, SSE_DONE, SSE_KEEPALIVE } from "../../src/gateway/wire/sse-encode";
import { FIXTURE_NAMES, fixtureEvents } from "../support/fixtures";

function decode(text: string): SseEvent[] {
  const d = createSseDecoder();
  return [...d.push(text), ...d.end()];
}

describe("encodeEvent", () => {
  test("frames as event line, data line, blank line", () => {
    const ev = { type: "response.output_text.delta", sequence_number: 3, delta: "Hi" };
    expect(encodeEvent(ev)).toBe(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
  });

  test("every fixture event survives encode -> decode -> parse unchanged, one frame each", () => {
    for (const name of FIXTURE_NAMES) {
      const events = fixtureEvents(name);
      const decoded = decode(events.map(encodeEvent).join(""));
      expect(decoded.map((e) => e.event)).toEqual(events.map((e) => e.type));
      expect(decoded.map(parseStreamEvent)).toEqual(events);
    }
  });

  test("line breaks, unicode and separators in string fields stay inside the one data line", () => {
    const ev = { type: "response.output_text.delta", delta: "a\nb\r\nc\rd\n\ndata: fake\n\n\u2028é👋" };
    const frame = encodeEvent(ev);
    expect(frame.split("\n").length).toBe(4);
    const decoded = decode(frame);
    expect(decoded).toHaveLength(1);
    expect(parseStreamEvent(decoded[0])).toEqual(ev);
  });

  test("a line break in the type cannot inject fields into the frame", () => {
    const frame = encodeEvent({ type: "x\ndata: injected\r\n" });
    const decoded = decode(frame);
    expect(decoded).toHaveLength(1);
    expect(decoded[0].event).toBe("xdata: injected");
    expect(parseStreamEvent(decoded[0])).toEqual({ type: "x\ndata: injected\r\n" });
  });
});

describe("encodeData", () => {
  test("frames as a data line and a blank line, with no event line", () => {
    const chunk = { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "a\nb" } }] };
    const frame = encodeData(chunk);
    expect(frame).toBe(`data: ${JSON.stringify(chunk)}\n\n`);
    const decoded = decode(frame);
    expect(decoded).toEqual([{ data: JSON.stringify(chunk) }]);
    expect(JSON.parse(decoded[0].data)).toEqual(chunk);
  });

  test("undefined is sent as JSON null, not the word undefined", () => {
    expect(decode(encodeData(undefined))).toEqual([{ data: "null" }]);
  });
});

describe("constants", () => {
  test("SSE_DONE decodes to the done marker", () => {
    const decoded = decode(SSE_DONE);
    expect(decoded).toHaveLength(1);
    expect(parseStreamEvent(decoded[0])).toBe("done");
  });

  test("SSE_KEEPALIVE is a comment: it dispatches nothing and does not disturb the next event", () => {
    expect(decode(SSE_KEEPALIVE)).toEqual([]);
    const ev = { type: "response.completed" };
    expect(decode(SSE_KEEPALIVE + encodeEvent(ev) + SSE_KEEPALIVE).map(parseStreamEvent)).toEqual([ev]);
  });
});

test("every frame is exactly one block ending in a blank line, for clients that split frames on \\n\\n", () => {
  const frames = [SSE_DONE, SSE_KEEPALIVE, encodeEvent({ type: "t", text: "a\n\nb" }), encodeData({ text: "a\n\nb" })];
  for (const frame of frames) {
    const blocks = frame.split("\n\n");
    expect(blocks).toHaveLength(2);
    expect(blocks[1]).toBe("");
    expect(blocks[0].length).toBeGreaterThan(0);
  }
});
