import { describe, expect, test } from "bun:test";
import { APIError } from "openai";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { Stream } from "openai/streaming";
import type { ChatCompletionChunk as SdkChunk } from "openai/resources/chat/completions";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import type { ChatCompletionChunk } from "../../src/gateway/translate/chat-types";
import { createChatStreamTranslator } from "../../src/gateway/translate/stream-to-chat";

// Compile-time check (tsc): our chunk type is assignable to the SDK's.
export type ChunkMatchesSdk = ChatCompletionChunk extends SdkChunk ? true : never;
const chunkMatchesSdk: ChunkMatchesSdk = true;
void chunkMatchesSdk;

const OPTS = { id: "chatcmpl-s1", created: 1_700_000_000, model: "gpt-client-name" };
const USAGE = {
  input_tokens: 92,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 52,
  output_tokens_details: { reasoning_tokens: 20 },
  total_tokens: 144,
};
const CHAT_USAGE = {
  prompt_tokens: 92,
  completion_tokens: 52,
  total_tokens: 144,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 20 },
};

/** Builds an upstream event stream the way OpenAI orders it, with running sequence numbers. */
class Upstream {
  events: ResponsesStreamEvent[] = [];
  private output: any[] = [];

  private add(type: string, fields: Record<string, unknown> = {}): this {
    this.events.push({ type, sequence_number: this.events.length, ...fields });
    return this;
  }

  private resp(status: string, extra: Record<string, unknown> = {}) {
    return { id: "resp_1", object: "response", created_at: 1, status, error: null, incomplete_details: null, model: "m", output: this.output, usage: null, ...extra };
  }

  created(): this {
    return this.add("response.created", { response: this.resp("in_progress") }).add("response.in_progress", { response: this.resp("in_progress") });
  }

  message(pieces: string[], opts: { deltas?: boolean } = {}): this {
    const oi = this.output.length;
    const id = `msg_${oi}`;
    const text = pieces.join("");
    this.add("response.output_item.added", { output_index: oi, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] } });
    this.add("response.content_part.added", { item_id: id, output_index: oi, content_index: 0, part: { type: "output_text", annotations: [], text: "" } });
    if (opts.deltas !== false) {
      for (const delta of pieces) this.add("response.output_text.delta", { item_id: id, output_index: oi, content_index: 0, delta });
    }
    this.add("response.output_text.done", { item_id: id, output_index: oi, content_index: 0, text });
    const item = { id, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text }] };
    this.add("response.output_item.done", { output_index: oi, item });
    this.output.push(item);
    return this;
  }

  reasoning(summaries: string[][] = []): this {
    const oi = this.output.length;
    const id = `rs_${oi}`;
    this.add("response.output_item.added", { output_index: oi, item: { id, type: "reasoning", summary: [] } });
    summaries.forEach((pieces, si) => {
      for (const delta of pieces) this.add("response.reasoning_summary_text.delta", { item_id: id, output_index: oi, summary_index: si, delta });
    });
    const item = { id, type: "reasoning", summary: summaries.map((p) => ({ type: "summary_text", text: p.join("") })) };
    this.add("response.output_item.done", { output_index: oi, item });
    this.output.push(item);
    return this;
  }

  call(callId: string, name: string, pieces: string[], opts: { deltas?: boolean; added?: boolean } = {}): this {
    const oi = this.output.length;
    const id = `fc_${oi}`;
    const args = pieces.join("");
    if (opts.added !== false) {
      this.add("response.output_item.added", { output_index: oi, item: { id, type: "function_call", status: "in_progress", arguments: "", call_id: callId, name } });
    }
    if (opts.deltas !== false) {
      for (const delta of pieces) this.add("response.function_call_arguments.delta", { item_id: id, output_index: oi, delta });
    }
    this.add("response.function_call_arguments.done", { item_id: id, output_index: oi, arguments: args });
    const item = { id, type: "function_call", status: "completed", arguments: args, call_id: callId, name };
    this.add("response.output_item.done", { output_index: oi, item });
    this.output.push(item);
    return this;
  }

  completed(usage: unknown = USAGE): this {
    return this.add("response.completed", { response: this.resp("completed", { usage }) });
  }

  incomplete(reason: string, usage: unknown = USAGE): this {
    return this.add("response.incomplete", { response: this.resp("incomplete", { incomplete_details: { reason }, usage }) });
  }

  failed(code: string, message: string): this {
    return this.add("response.failed", { response: this.resp("failed", { error: { code, message } }) });
  }

  raw(type: string, fields: Record<string, unknown>): this {
    return this.add(type, fields);
  }
}

function run(up: Upstream, includeUsage = false, end = true): any[] {
  const t = createChatStreamTranslator({ ...OPTS, includeUsage });
  const out = up.events.flatMap((ev) => t.push(ev));
  return end ? [...out, ...t.finish()] : out;
}

const deltas = (chunks: any[]) => chunks.filter((c) => c.choices?.length).map((c) => c.choices[0].delta);
const content = (chunks: any[]) => deltas(chunks).map((d) => d.content ?? "").join("");
const toolDeltas = (chunks: any[]) => deltas(chunks).flatMap((d) => d.tool_calls ?? []);
const finishReasons = (chunks: any[]) => chunks.filter((c) => c.choices?.length).map((c) => c.choices[0].finish_reason);

/** Feeds chunks through the official SDK's accumulator, the way a real client assembles the reply. */
async function sdkFinal(chunks: object[]) {
  const body = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(`${JSON.stringify(c)}\n`));
      controller.close();
    },
  });
  return ChatCompletionStream.fromReadableStream(body).finalChatCompletion();
}

describe("text replies", () => {
  test("role chunk first, content deltas, then an empty-delta stop chunk; no usage key by default", () => {
    const chunks = run(new Upstream().created().message(["Hel", "lo"]).completed());
    expect(chunks[0]).toEqual({
      id: OPTS.id,
      object: "chat.completion.chunk",
      created: OPTS.created,
      model: OPTS.model,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
    });
    expect(deltas(chunks)).toEqual([{ role: "assistant", content: "" }, { content: "Hel" }, { content: "lo" }, {}]);
    expect(finishReasons(chunks)).toEqual([null, null, null, "stop"]);
    for (const c of chunks) expect("usage" in c).toBe(false);
  });

  test("text that arrives only in .done events is sent once", () => {
    const chunks = run(new Upstream().created().message(["Hello there"], { deltas: false }).completed());
    expect(content(chunks)).toBe("Hello there");
  });

  test("a terminal event with output but no item events still yields the text", () => {
    const up = new Upstream().raw("response.completed", {
      response: { status: "completed", output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "only here" }] }], usage: USAGE },
    });
    const chunks = run(up);
    expect(content(chunks)).toBe("only here");
    expect(finishReasons(chunks).at(-1)).toBe("stop");
  });
});

describe("tool calls", () => {
  test("parallel calls get indexes 0 and 1; the first delta names the call, later ones carry arguments only", () => {
    const up = new Upstream().created().call("call_s", "search", ['{"q":', '"tigers"}']).call("call_w", "weather", ['{"city":"Detroit"}']).completed();
    const chunks = run(up);
    expect(toolDeltas(chunks)).toEqual([
      { index: 0, id: "call_s", type: "function", function: { name: "search", arguments: "" } },
      { index: 0, function: { arguments: '{"q":' } },
      { index: 0, function: { arguments: '"tigers"}' } },
      { index: 1, id: "call_w", type: "function", function: { name: "weather", arguments: "" } },
      { index: 1, function: { arguments: '{"city":"Detroit"}' } },
    ]);
    expect(finishReasons(chunks).at(-1)).toBe("tool_calls");
  });

  test("a reasoning item before the call does not shift its index", () => {
    const up = new Upstream().created().reasoning().call("call_1", "f", ["{}"]).completed();
    const first = toolDeltas(run(up))[0];
    expect(up.events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call")!.output_index).toBe(1);
    expect(first).toEqual({ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } });
  });

  test("a call with empty arguments gets '{}' exactly once", () => {
    const chunks = run(new Upstream().created().call("call_e", "now", []).completed());
    const args = toolDeltas(chunks).map((d) => d.function.arguments).join("");
    expect(args).toBe("{}");
  });

  test("a call sent whole in output_item.done (no added, no deltas) is emitted once", () => {
    const chunks = run(new Upstream().created().call("call_d", "f", ['{"a":1}'], { deltas: false, added: false }).completed());
    expect(toolDeltas(chunks)).toEqual([
      { index: 0, id: "call_d", type: "function", function: { name: "f", arguments: "" } },
      { index: 0, function: { arguments: '{"a":1}' } },
    ]);
  });

  test("the official SDK assembles text, reasoning and both calls from the chunks", async () => {
    const up = new Upstream().created().reasoning([["Think", "ing."]]).message(["Checking."]).call("call_a", "a", ['{"x"', ":1}"]).call("call_b", "b", []).completed();
    const final = await sdkFinal(run(up));
    const msg = final.choices[0].message;
    expect(msg.content).toBe("Checking.");
    const calls = (msg.tool_calls ?? []).map((c: any) => ({ id: c.id, type: c.type, name: c.function.name, arguments: c.function.arguments }));
    expect(calls).toEqual([
      { id: "call_a", type: "function", name: "a", arguments: '{"x":1}' },
      { id: "call_b", type: "function", name: "b", arguments: "{}" },
    ]);
    expect(final.choices[0].finish_reason).toBe("tool_calls");
  });
});

describe("reasoning", () => {
  test("summary deltas become reasoning_content, parts separated by a blank line", () => {
    const chunks = run(new Upstream().created().reasoning([["A", "b"], ["C"]]).message(["ok"]).completed());
    const reasoning = deltas(chunks).map((d) => d.reasoning_content ?? "").join("");
    expect(reasoning).toBe("Ab\n\nC");
    expect(content(chunks)).toBe("ok");
  });
});

describe("endings", () => {
  test("include_usage: every chunk has usage null, then a usage chunk with no choices", () => {
    const chunks = run(new Upstream().created().message(["hi"]).completed(), true);
    const last = chunks.at(-1);
    expect(last).toEqual({ id: OPTS.id, object: "chat.completion.chunk", created: OPTS.created, model: OPTS.model, choices: [], usage: CHAT_USAGE });
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
    expect(finishReasons(chunks).at(-1)).toBe("stop");
  });

  test("incomplete by max_output_tokens ends with length and still sends its usage", () => {
    const chunks = run(new Upstream().created().message(["The answer"]).incomplete("max_output_tokens"), true);
    expect(finishReasons(chunks).at(-1)).toBe("length");
    expect(chunks.at(-1).usage).toEqual(CHAT_USAGE);
  });

  test("incomplete by content_filter ends with content_filter", () => {
    expect(finishReasons(run(new Upstream().created().message(["x"]).incomplete("content_filter"))).at(-1)).toBe("content_filter");
  });

  test("response.failed becomes an error frame, with no finish chunk, and ends the stream", () => {
    const t = createChatStreamTranslator({ ...OPTS, includeUsage: true });
    const up = new Upstream().created().message(["partial"]).failed("rate_limit_exceeded", "Slow down.");
    const out = up.events.flatMap((ev) => t.push(ev));
    // Without a type of its own, the frame gets the type a non-streaming caller would see for that code.
    expect(out.at(-1)).toEqual({ error: { message: "Slow down.", type: "invalid_request_error", code: "rate_limit_exceeded", param: null } });
    expect(finishReasons(out).filter((r) => r !== null)).toEqual([]);
    expect(t.push({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "late" })).toEqual([]);
    expect(t.finish()).toEqual([]);
  });

  test("error events in nested and flat form both become error frames", () => {
    const nested = run(new Upstream().created().raw("error", { error: { code: "server_error", message: "boom", param: null } }).failed("server_error", "boom"));
    expect(nested.filter((c) => "error" in c)).toEqual([{ error: { message: "boom", type: "upstream_error", code: "server_error", param: null } }]);
    const flat = run(new Upstream().created().raw("error", { code: "invalid_prompt", message: "bad", param: "input" }));
    expect(flat.at(-1)).toEqual({ error: { message: "bad", type: "invalid_request_error", code: "invalid_prompt", param: "input" } });
    const typed = run(new Upstream().created().raw("error", { error: { code: "x", type: "server_error", message: "m" } }));
    expect(typed.at(-1)).toEqual({ error: { message: "m", type: "server_error", code: "x", param: null } });
  });

  test("an upstream end without a terminal event is an error, never a stop", () => {
    const chunks = run(new Upstream().created().message(["cut off"]));
    expect(chunks.at(-1)).toMatchObject({ error: { type: "upstream_error", code: "upstream_error" } });
    expect(finishReasons(chunks)).not.toContain("stop");
  });

  test("fail() mid-stream sends the transport error once and silences later events", () => {
    const t = createChatStreamTranslator({ ...OPTS, includeUsage: false });
    t.push({ type: "response.created", response: {} });
    expect(t.fail({ message: "upstream timed out", type: "upstream_error", code: "upstream_timeout" })).toEqual([
      { error: { message: "upstream timed out", type: "upstream_error", code: "upstream_timeout", param: null } },
    ]);
    expect(t.push({ type: "response.completed", response: { status: "completed", output: [], usage: USAGE } })).toEqual([]);
    expect(t.finish()).toEqual([]);
    expect(t.fail({ message: "again", type: "x", code: "y" })).toEqual([]);
  });

  test("after a terminal event, finish() adds nothing and further events are ignored", () => {
    const t = createChatStreamTranslator({ ...OPTS, includeUsage: false });
    for (const ev of new Upstream().created().message(["a"]).completed().events) t.push(ev);
    expect(t.push({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "b" })).toEqual([]);
    expect(t.finish()).toEqual([]);
  });

  test("the official SDK throws on the error frame", async () => {
    const chunks = run(new Upstream().created().message(["partial"]).failed("server_error", "The model crashed."));
    const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
    const stream = Stream.fromSSEResponse<any>(new Response(sse), new AbortController());
    let caught: unknown;
    try {
      for await (const _ of stream) {
        // drain
      }
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(APIError);
    expect((caught as APIError).message).toContain("The model crashed.");
  });
});

describe("hostile events (property-test regressions)", () => {
  test("a delta or index that is a JSON object is ignored, not a TypeError", () => {
    // Found by tests/property/stream-to-chat: String({"toString": 0}) and `${{"toString": 0}}` throw, because
    // JSON.parse makes "toString" an own, non-callable property. Such fields now read like absent ones.
    const hostile = JSON.parse('{"toString": 0}');
    const t = createChatStreamTranslator({ ...OPTS, includeUsage: false });
    t.push({ type: "response.created" });
    expect(t.push({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: hostile })).toEqual([]);
    expect(t.push({ type: "response.refusal.delta", output_index: 0, content_index: 0, delta: [hostile] })).toEqual([]);
    const out = t.push({ type: "response.output_text.delta", output_index: 0, content_index: hostile, delta: "ok" }) as any[];
    expect(out.map((c) => c.choices[0].delta)).toEqual([{ content: "ok" }]);
    expect(t.push({ type: "response.reasoning_summary_text.delta", output_index: 1, summary_index: hostile, delta: "r" })).toHaveLength(1);
  });

  test("a call with arguments that opens the stream comes after the role chunk", () => {
    // Found by tests/property/stream-to-chat: with no response.created before it, a call carrying its arguments
    // (here only in the terminal output) was sent as header, role chunk, arguments: the role must come first.
    const t = createChatStreamTranslator({ ...OPTS, includeUsage: false });
    const item = { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' };
    const deltas = (t.push({ type: "response.completed", response: { status: "completed", output: [item] } }) as any[]).map((c) => c.choices[0]);
    expect(deltas.map((c) => c.delta)).toEqual([
      { role: "assistant", content: "" },
      { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] },
      {},
    ]);
    expect(deltas[3].finish_reason).toBe("tool_calls");
  });
});
