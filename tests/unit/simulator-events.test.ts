import { describe, expect, test } from "bun:test";
import {
  buildResponseEvents,
  encodeEventFrames,
  encodeEventStream,
  splitIntoDeltas,
} from "../../src/gateway/simulator/events";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";

/** A deliberately naive SSE reader: enough to prove the encoding is standard framing, not to test a parser. */
function parseSse(text: string): Array<{ event?: string; data: string }> {
  const frames: Array<{ event?: string; data: string }> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      if (field === "data") data.push(value);
    }
    if (data.length) frames.push({ event, data: data.join("\n") });
  }
  return frames;
}

const types = (events: ResponsesStreamEvent[]) => events.map((e) => e.type);

describe("buildResponseEvents: text reply", () => {
  const events = buildResponseEvents({ id: "resp_abc", model: "gpt-5.4", createdAt: 1700000000, text: "Hello there, world", deltas: 3 });

  test("follows the captured order", () => {
    expect(types(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  test("sequence numbers count from 0 without gaps", () => {
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  test("created carries a full in-progress response object", () => {
    const r = events[0].response;
    expect(r).toMatchObject({
      id: "resp_abc",
      object: "response",
      created_at: 1700000000,
      status: "in_progress",
      error: null,
      incomplete_details: null,
      model: "gpt-5.4",
      output: [],
      usage: null,
      tool_choice: "auto",
      tools: [],
      parallel_tool_calls: true,
      store: false,
    });
    expect(r).toHaveProperty("instructions");
    expect(r).toHaveProperty("reasoning");
    expect(r).toHaveProperty("text");
  });

  test("deltas join to the done text and item ids derive from the response id", () => {
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((d) => d.delta).join("")).toBe("Hello there, world");
    for (const d of deltas) expect(d).toMatchObject({ item_id: "msg_abc", output_index: 0, content_index: 0 });
    expect(events.find((e) => e.type === "response.output_text.done")!.text).toBe("Hello there, world");
    expect(events[2].item).toEqual({ id: "msg_abc", type: "message", status: "in_progress", content: [], role: "assistant" });
    expect(events[3].part).toEqual({ type: "output_text", annotations: [], text: "" });
  });

  test("completed carries the full output and usage", () => {
    const done = events[events.length - 1].response;
    expect(done.status).toBe("completed");
    expect(done.output).toEqual([
      {
        id: "msg_abc",
        type: "message",
        status: "completed",
        content: [{ type: "output_text", annotations: [], text: "Hello there, world" }],
        role: "assistant",
      },
    ]);
    expect(done.usage).toEqual({
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 5,
    });
  });

  test("is deterministic when an id is given", () => {
    const again = buildResponseEvents({ id: "resp_abc", model: "gpt-5.4", createdAt: 1700000000, text: "Hello there, world", deltas: 3 });
    expect(again).toEqual(events);
  });

  test("without an id, ids are fresh resp_ ids", () => {
    const a = buildResponseEvents({ model: "m", createdAt: 1, text: "x" })[0].response.id;
    const b = buildResponseEvents({ model: "m", createdAt: 1, text: "x" })[0].response.id;
    expect(a).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(a).not.toBe(b);
  });
});

describe("buildResponseEvents: calls, reasoning, terminals", () => {
  test("function calls stream argument deltas at their own output index after reasoning", () => {
    const events = buildResponseEvents({
      id: "resp_t1",
      model: "m",
      createdAt: 1,
      reasoning: "Need the weather.",
      encryptedReasoning: "gAAAAB-opaque",
      calls: [
        { name: "weather", arguments: '{"city":"Paris"}', callId: "call_1" },
        { name: "search", arguments: '{"query":"Paris events this week"}' },
      ],
      usage: { input_tokens: 50 },
    });
    expect(types(events).slice(2, 9)).toEqual([
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
    ]);
    const reasoningDone = events.find((e) => e.type === "response.output_item.done" && e.output_index === 0)!;
    expect(reasoningDone.item).toEqual({
      id: "rs_t1",
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Need the weather." }],
      encrypted_content: "gAAAAB-opaque",
    });

    const added = events.filter((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
    expect(added.map((e) => e.output_index)).toEqual([1, 2]);
    expect(added[0].item).toEqual({ id: "fc_t1_0", type: "function_call", status: "in_progress", arguments: "", call_id: "call_1", name: "weather" });
    expect(added[1].item.call_id).toMatch(/^call_/);

    for (const [index, args] of [[1, '{"city":"Paris"}'], [2, '{"query":"Paris events this week"}']] as const) {
      const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta" && e.output_index === index);
      expect(deltas.length).toBeGreaterThan(1);
      for (const d of deltas) expect(d).not.toHaveProperty("content_index");
      expect(deltas.map((d) => d.delta).join("")).toBe(args);
      const done = events.find((e) => e.type === "response.function_call_arguments.done" && e.output_index === index)!;
      expect(done.arguments).toBe(args);
    }

    const final = events[events.length - 1].response;
    expect(final.output.map((o: any) => o.type)).toEqual(["reasoning", "function_call", "function_call"]);
    const u = final.usage;
    // output_tokens includes the reasoning tokens, as the upstream reports them.
    expect(u.output_tokens_details.reasoning_tokens).toBe(5);
    expect(u.output_tokens).toBe(5 + 4 + 9);
    expect(u.total_tokens).toBe(50 + u.output_tokens);
  });

  test("an empty reasoning summary gives an item without summary events", () => {
    const events = buildResponseEvents({ id: "resp_r", model: "m", createdAt: 1, reasoning: "", text: "ok" });
    expect(types(events).slice(2, 5)).toEqual(["response.output_item.added", "response.output_item.done", "response.output_item.added"]);
    expect(events[3].item).toEqual({ id: "rs_r", type: "reasoning", summary: [] });
  });

  test("incomplete names its reason and marks the message incomplete", () => {
    const events = buildResponseEvents({ model: "m", createdAt: 1, text: "cut", terminal: "incomplete" });
    const last = events[events.length - 1];
    expect(last.type).toBe("response.incomplete");
    expect(last.response.status).toBe("incomplete");
    expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(last.response.output[0].status).toBe("incomplete");
    expect(last.response.usage.output_tokens).toBe(1);
  });

  test("failed carries the error, preceded by a nested or flat error event", () => {
    const error = { code: "rate_limit_exceeded", message: "Rate limit reached. Please try again in 20s." };
    const nested = buildResponseEvents({ model: "m", createdAt: 1, terminal: "failed", error, errorEvent: "nested" });
    expect(types(nested)).toEqual(["response.created", "response.in_progress", "error", "response.failed"]);
    expect(nested[2]).toEqual({ type: "error", sequence_number: 2, error: { ...error, param: null } });
    expect(nested[3].response).toMatchObject({ status: "failed", error, output: [] });

    const flat = buildResponseEvents({ model: "m", createdAt: 1, terminal: "failed", error, errorEvent: "flat" });
    expect(flat[2]).toEqual({ type: "error", sequence_number: 2, ...error, param: null });
  });

  test("terminal none stops after the last item; emptyTerminalOutput empties only the terminal output", () => {
    const cut = buildResponseEvents({ model: "m", createdAt: 1, text: "abc", terminal: "none" });
    expect(cut[cut.length - 1].type).toBe("response.output_item.done");

    const empty = buildResponseEvents({ model: "m", createdAt: 1, text: "abc", emptyTerminalOutput: true });
    expect(empty[empty.length - 1].response.output).toEqual([]);
    expect(empty.some((e) => e.type === "response.output_item.done" && e.item.content[0].text === "abc")).toBe(true);
  });

  test("the response object echoes the request", () => {
    const tools = [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }];
    const [created] = buildResponseEvents({
      model: "m",
      createdAt: 1,
      text: "x",
      request: { instructions: "Be brief.", tools, tool_choice: { type: "function", name: "f" }, parallel_tool_calls: false, reasoning: { effort: "xhigh" } },
    });
    expect(created.response).toMatchObject({
      instructions: "Be brief.",
      tools,
      tool_choice: { type: "function", name: "f" },
      parallel_tool_calls: false,
      reasoning: { effort: "xhigh", summary: null },
    });
  });
});

describe("splitIntoDeltas", () => {
  test("default split is word-sized and lossless, including whitespace", () => {
    const text = "  Hi there,\nfriend!  ";
    const parts = splitIntoDeltas(text);
    expect(parts.join("")).toBe(text);
    expect(parts.length).toBe(4);
  });

  test("N deltas never split a surrogate pair", () => {
    const text = "ab😀cd😀ef";
    const parts = splitIntoDeltas(text, 4);
    expect(parts).toHaveLength(4);
    expect(parts.join("")).toBe(text);
    for (const p of parts) expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    expect(splitIntoDeltas("abc", 10)).toEqual(["a", "b", "c"]);
    expect(splitIntoDeltas("", 3)).toEqual([]);
  });
});

describe("encodeEventStream", () => {
  const events = buildResponseEvents({ id: "resp_enc", model: "m", createdAt: 1, text: "one two three" });

  test("plain framing round-trips through a line parser, with event names matching data.type", () => {
    const text = encodeEventStream(events);
    expect(text).toStartWith("event: response.created\ndata: {");
    expect(text).not.toContain("[DONE]");
    const frames = parseSse(text);
    expect(frames.map((f) => JSON.parse(f.data))).toEqual(events);
    for (const f of frames) expect(f.event).toBe(JSON.parse(f.data).type);
  });

  test("CRLF, comments and bare event frames still parse to the same events", () => {
    const text = encodeEventStream(events, { crlf: true, withComments: true, bareEventFrames: true });
    expect(text).toContain("\r\n\r\n");
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).toContain(": keep-alive");
    expect(text).toMatch(/event: response\.heartbeat\r\n\r\n/);
    expect(parseSse(text).map((f) => JSON.parse(f.data))).toEqual(events);
  });

  test("frames are one per event, plus [DONE] only when asked", () => {
    expect(encodeEventFrames(events)).toHaveLength(events.length);
    const withDone = encodeEventFrames(events, { done: true });
    expect(withDone[withDone.length - 1]).toBe("data: [DONE]\n\n");
  });
});
