/**
 * Responses events -> Anthropic Messages events and one message (pure): the event sequence Anthropic's clients expect,
 * read back by @anthropic-ai/sdk's own MessageStream; the stream folded by the SDK equals the collected reply; stop
 * sequences cut across deltas; thinking carries Gantry's signature; failures are in-band error events.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { buildResponseEvents, type ResponseEventSpec } from "../../src/gateway/simulator/events";
import { createResponseCollector } from "../../src/gateway/wire/collect";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { createMessagesStreamTranslator, usageToMessages } from "../../src/gateway/translate/messages/stream-to-messages";
import { responsesToMessages } from "../../src/gateway/translate/messages/responses-to-messages";
import { StopSequenceCutter, createStopWatch, cutAtStopSequence } from "../../src/gateway/translate/messages/stop-sequences";
import { encryptedContentOf, signatureOf } from "../../src/gateway/translate/messages/thinking-signature";

const OPTS = { id: "msg_test", model: "claude-sonnet-4-5", inputTokens: 7, stopSequences: [] as string[], thinking: false };

function spec(extra: Partial<ResponseEventSpec>): ResponseEventSpec {
  return { id: "resp_abc", model: "gpt-5", createdAt: 1_700_000_000, ...extra };
}

/** The frames of a whole stream, split into {event, data}. */
function frames(events: ResponsesStreamEvent[], opts = OPTS): Array<{ event: string; data: any }> {
  const t = createMessagesStreamTranslator(opts);
  let text = "";
  for (const ev of events) text += t.push(ev);
  text += t.finish();
  return parseFrames(text);
}

function parseFrames(text: string): Array<{ event: string; data: any }> {
  return text
    .split("\n\n")
    .filter((b) => b !== "")
    .map((block) => {
      const [eventLine, dataLine] = block.split("\n");
      expect(eventLine.startsWith("event: ")).toBe(true);
      expect(dataLine.startsWith("data: ")).toBe(true);
      const data = JSON.parse(dataLine.slice(6));
      // Anthropic's frames name the event twice: the SSE name and the payload's type.
      expect(data.type).toBe(eventLine.slice(7));
      return { event: eventLine.slice(7), data };
    });
}

/** What the SDK's MessageStream makes of the frames (it accumulates exactly as it does for Anthropic). */
async function sdkFold(fs: Array<{ data: any }>) {
  const lines = fs.map((f) => JSON.stringify(f.data)).join("\n") + "\n";
  const stream = MessageStream.fromReadableStream(new Response(lines).body!);
  return await stream.finalMessage();
}

function collected(events: ResponsesStreamEvent[]) {
  const c = createResponseCollector();
  for (const ev of events) c.push(ev);
  return c.result();
}

describe("the event sequence", () => {
  test("text: message_start, one text block, message_delta with end_turn and usage, message_stop", () => {
    const fs = frames(buildResponseEvents(spec({ text: "Hello there world", usage: { input_tokens: 12, output_tokens: 3 } })));
    expect(fs.map((f) => f.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(fs[0].data.message).toMatchObject({ id: "msg_test", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 7, output_tokens: 0 } });
    expect(fs[1].data).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    expect(fs.slice(2, 5).map((f) => f.data.delta.text).join("")).toBe("Hello there world");
    expect(fs[6].data.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(fs[6].data.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
  });

  test("tool calls: tool_use blocks with input_json_delta, stop_reason tool_use", async () => {
    const events = buildResponseEvents(spec({ text: "Checking.", calls: [{ name: "get_weather", arguments: '{"city":"Paris"}', callId: "call_1" }, { name: "noop", arguments: "" }] }));
    const fs = frames(events);
    const starts = fs.filter((f) => f.event === "content_block_start").map((f) => f.data.content_block);
    expect(starts).toEqual([
      { type: "text", text: "" },
      { type: "tool_use", id: "call_1", name: "get_weather", input: {} },
      expect.objectContaining({ type: "tool_use", name: "noop", input: {} }),
    ]);
    const json = fs.filter((f) => f.data.delta?.type === "input_json_delta" && f.data.index === 1).map((f) => f.data.delta.partial_json).join("");
    expect(json).toBe('{"city":"Paris"}');
    expect(fs.at(-2)!.data.delta.stop_reason).toBe("tool_use");
    const message = await sdkFold(fs);
    expect(message.content[1]).toEqual({ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } } as any);
    expect(message.stop_reason).toBe("tool_use");
  });

  test("a max_output_tokens cut-off is max_tokens, and wins over tool_use", () => {
    const fs = frames(buildResponseEvents(spec({ calls: [{ name: "f", arguments: '{"a":' }], terminal: "incomplete" })));
    expect(fs.at(-2)!.data.delta.stop_reason).toBe("max_tokens");
  });

  test("reasoning: a thinking block with thinking_delta and a signature_delta carrying the encrypted content, only when thinking was asked for", async () => {
    const events = buildResponseEvents(spec({ reasoning: "Let me think about it", encryptedReasoning: "gAAAAenc", text: "42" }));
    const fs = frames(events, { ...OPTS, thinking: true });
    const starts = fs.filter((f) => f.event === "content_block_start").map((f) => f.data.content_block.type);
    expect(starts).toEqual(["thinking", "text"]);
    const sig = fs.find((f) => f.data.delta?.type === "signature_delta")!;
    expect(encryptedContentOf(sig.data.delta.signature)).toBe("gAAAAenc");
    const message = await sdkFold(fs);
    expect(message.content[0]).toEqual({ type: "thinking", thinking: "Let me think about it", signature: signatureOf("gAAAAenc") } as any);
    // Not asked for: no thinking block at all.
    expect(frames(events).filter((f) => f.event === "content_block_start").map((f) => f.data.content_block.type)).toEqual(["text"]);
  });

  test("reasoning with no summary but encrypted content: a redacted_thinking block that carries it", () => {
    const fs = frames(buildResponseEvents(spec({ reasoning: "", encryptedReasoning: "gAAAAx", text: "ok" })), { ...OPTS, thinking: true });
    const first = fs.find((f) => f.event === "content_block_start")!;
    expect(first.data.content_block).toEqual({ type: "redacted_thinking", data: signatureOf("gAAAAx") });
  });

  test("an upstream failure is an in-band error event and nothing follows it", () => {
    const fs = frames(buildResponseEvents(spec({ text: "partial", terminal: "failed", error: { code: "server_error", message: "boom" } })));
    expect(fs.at(-1)).toEqual({ event: "error", data: { type: "error", error: { type: "api_error", message: "boom" } } });
    expect(fs.some((f) => f.event === "message_stop")).toBe(false);
    const overloaded = frames(buildResponseEvents(spec({ text: "p", terminal: "failed", error: { code: "server_is_overloaded", message: "busy" } })));
    expect(overloaded.at(-1)!.data.error.type).toBe("overloaded_error");
  });

  test("a stream that ends without its terminal event ends with an error event, not message_stop", () => {
    const fs = frames(buildResponseEvents(spec({ text: "cut", terminal: "none" })));
    expect(fs.at(-1)!.event).toBe("error");
    expect(fs.some((f) => f.event === "message_stop")).toBe(false);
  });

  test("usage: cached input counted apart", () => {
    expect(usageToMessages({ input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, output_tokens: 5, total_tokens: 105 })).toEqual({
      input_tokens: 40,
      output_tokens: 5,
      cache_read_input_tokens: 60,
      cache_creation_input_tokens: 0,
    });
  });
});

describe("the stream folded by the SDK is the collected reply", () => {
  const arbSpec = fc.record({
    text: fc.option(fc.string({ minLength: 1, maxLength: 60 }), { nil: undefined }),
    deltas: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    calls: fc.array(fc.record({ name: fc.constantFrom("a", "b_c"), arguments: fc.constantFrom("", "{}", '{"x":1}', '{"q":"hé\\n"}') }), { maxLength: 2 }),
    reasoning: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    encryptedReasoning: fc.option(fc.constantFrom("gAAAA1", "gAAAA2"), { nil: undefined }),
    terminal: fc.constantFrom("completed" as const, "incomplete" as const),
  });
  test("property", async () => {
    await fc.assert(
      fc.asyncProperty(arbSpec, fc.boolean(), fc.array(fc.constantFrom("e", "o ", "xyz", "a"), { maxLength: 2 }), async (s, thinking, stopSequences) => {
        if (s.text === undefined && s.calls.length === 0 && s.reasoning === undefined) return;
        const events = buildResponseEvents(spec(s));
        const opts = { ...OPTS, thinking, stopSequences };
        const streamed = await sdkFold(frames(events, opts));
        const whole = responsesToMessages(collected(events), opts);
        expect(streamed.content).toEqual(whole.content as any);
        expect(streamed.stop_reason).toBe(whole.stop_reason);
        expect(streamed.stop_sequence).toBe(whole.stop_sequence);
        expect(streamed.usage.output_tokens).toBe(whole.usage.output_tokens);
        expect(streamed.usage.input_tokens).toBe(whole.usage.input_tokens);
      }),
      { numRuns: 150 },
    );
  });
});

describe("stop sequences", () => {
  test("cut across deltas: the text before the sequence, stop_reason stop_sequence, nothing after", async () => {
    const events = buildResponseEvents(spec({ text: "one two STOP three", deltas: 9, calls: [{ name: "f", arguments: "{}" }] }));
    const fs = frames(events, { ...OPTS, stopSequences: ["STOP"] });
    const message = await sdkFold(fs);
    expect(message.content.map((b: any) => ({ type: b.type, text: b.text }))).toEqual([{ type: "text", text: "one two " }]);
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("STOP");
    expect(fs.filter((f) => f.event === "content_block_start")).toHaveLength(1);
    const whole = responsesToMessages(collected(events), { ...OPTS, stopSequences: ["STOP"] });
    expect(whole.content).toEqual([{ type: "text", text: "one two " }]);
    expect(whole.stop_reason).toBe("stop_sequence");
    expect(whole.stop_sequence).toBe("STOP");
  });

  test("a reply that opens with the sequence has no text block at all", async () => {
    const events = buildResponseEvents(spec({ text: "STOP and more", deltas: 5 }));
    const fs = frames(events, { ...OPTS, stopSequences: ["STOP"] });
    expect(fs.filter((f) => f.event === "content_block_start")).toHaveLength(0);
    expect(fs.at(-2)!.data.delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "STOP" });
    expect(responsesToMessages(collected(events), { ...OPTS, stopSequences: ["STOP"] }).content).toEqual([]);
  });

  test("property: however the text is split into deltas, the cutter gives what cutting the whole text gives", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.array(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }), fc.array(fc.nat(40), { maxLength: 6 }), (text, seqs, cuts) => {
        const points = [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b);
        const pieces: string[] = [];
        let last = 0;
        for (const p of points) {
          pieces.push(text.slice(last, p));
          last = p;
        }
        pieces.push(text.slice(last));
        const cutter = new StopSequenceCutter(seqs);
        let out = "";
        let stopped: string | null = null;
        for (const piece of pieces) {
          const r = cutter.push(piece);
          out += r.text;
          stopped ??= r.stopped;
        }
        out += cutter.flush();
        const whole = cutAtStopSequence(text, seqs);
        expect(out).toBe(whole.text);
        expect(stopped).toBe(whole.stopped);
        // What was let through never holds a sequence.
        for (const s of seqs) expect(out.includes(s)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  test("a prefix of a sequence is held back only until it can no longer be one", () => {
    const c = new StopSequenceCutter(["</end>"]);
    expect(c.push("abc</e").text).toBe("abc");
    expect(c.push("x").text).toBe("</ex");
    expect(c.flush()).toBe("");
  });
});

describe("ending at a stop sequence before the upstream ends", () => {
  const USAGE = { input_tokens: 9, output_tokens: 3, total_tokens: 12 };

  test("endAtStop: message_delta with the usage given and message_stop right after the cut; nothing before a stop or after the end", async () => {
    const events = buildResponseEvents(spec({ text: "one two STOP three four", deltas: 12 }));
    const t = createMessagesStreamTranslator({ ...OPTS, stopSequences: ["STOP"] });
    let text = "";
    let at = 0;
    for (; at < events.length; at++) {
      text += t.push(events[at]!);
      const end = t.endAtStop(() => USAGE);
      if (end !== "") {
        text += end;
        break;
      }
    }
    // Cut before the upstream's terminal event; the rest of the stream and its end add nothing.
    expect(at).toBeLessThan(events.length - 1);
    for (const ev of events.slice(at + 1)) expect(t.push(ev)).toBe("");
    expect(t.finish()).toBe("");
    expect(t.endAtStop(() => USAGE)).toBe("");
    const fs = parseFrames(text);
    expect(fs.at(-2)!.data).toEqual({ type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "STOP" }, usage: usageToMessages(USAGE) });
    expect(fs.at(-1)!.event).toBe("message_stop");
    const message = await sdkFold(fs);
    expect(message.content.map((b: any) => b.text)).toEqual(["one two "]);
    // Without a stop, nothing.
    expect(createMessagesStreamTranslator({ ...OPTS, stopSequences: ["STOP"] }).endAtStop(() => USAGE)).toBe("");
  });

  test("createStopWatch: true from the event whose text completes a sequence (across deltas, or in a whole text), per content part", () => {
    const events = buildResponseEvents(spec({ text: "one two ST" + "OP three", deltas: 10 }));
    const watch = createStopWatch(["STOP"]);
    const first = events.findIndex((ev) => watch(ev));
    expect(events[first]!.type).toBe("response.output_text.delta");
    // The deltas up to it hold the whole sequence, the ones before it do not.
    const deltas = (n: number) => events.slice(0, n).filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(deltas(first + 1)).toContain("STOP");
    expect(deltas(first)).not.toContain("STOP");
    expect(watch({ type: "response.completed" } as ResponsesStreamEvent)).toBe(true);
    // A whole text with no delta before it.
    const whole = createStopWatch(["STOP"]);
    expect(whole({ type: "response.output_text.done", output_index: 0, content_index: 0, text: "aSTOPb" } as ResponsesStreamEvent)).toBe(true);
    // Two parts are cut apart: a sequence split between them is none.
    const parts = createStopWatch(["STOP"]);
    expect(parts({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "ST" } as ResponsesStreamEvent)).toBe(false);
    expect(parts({ type: "response.output_text.delta", output_index: 1, content_index: 0, delta: "OP" } as ResponsesStreamEvent)).toBe(false);
  });
});
