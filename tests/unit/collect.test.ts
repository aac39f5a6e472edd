import { describe, expect, test } from "bun:test";
import { addOutputText } from "openai/lib/ResponsesParser";
import { createResponseCollector } from "../../src/gateway/wire/collect";
import { streamErrorOf, usageOf } from "../../src/gateway/wire/upstream-events";
import { TERMINAL_EVENT_TYPES, type ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { fixtureEvents } from "../support/fixtures";

function collect(events: ResponsesStreamEvent[]) {
  const c = createResponseCollector();
  for (const ev of events) c.push(ev);
  return c;
}

const ofType = (events: ResponsesStreamEvent[], type: string) => events.filter((e) => e.type === type);
const only = (events: ResponsesStreamEvent[], type: string) => {
  const found = ofType(events, type);
  expect(found).toHaveLength(1);
  return found[0];
};
const deltaText = (events: ResponsesStreamEvent[]) =>
  ofType(events, "response.output_text.delta")
    .map((e) => e.delta)
    .join("");

/** What openai-node would expose as `response.output_text` for this output. */
function sdkOutputText(output: unknown[]): string {
  const rsp = { output } as any;
  addOutputText(rsp);
  return rsp.output_text;
}

/** The same stream as if no `.done` event and no terminal output had ever been sent. */
function withoutDoneEvents(events: ResponsesStreamEvent[]): ResponsesStreamEvent[] {
  return events
    .filter((e) => !/\.done$/.test(e.type))
    .map((e) => (TERMINAL_EVENT_TYPES.has(e.type) ? { ...e, response: { ...e.response, output: [] } } : e));
}

describe("createResponseCollector on recorded-style streams", () => {
  test("text: the terminal response, with output_text as the SDK computes it", () => {
    const events = fixtureEvents("text");
    const completed = only(events, "response.completed");
    const r = collect(events).result();
    expect(r).toEqual({ ...completed.response, output_text: deltaText(events) });
    expect(r.output_text).toBe(sdkOutputText(r.output));
    expect(r.output_text.length).toBeGreaterThan(0);
  });

  test("parallel-tools: both calls, in output_index order, with complete arguments", () => {
    const events = fixtureEvents("parallel-tools");
    const r = collect(events).result();
    const added = ofType(events, "response.output_item.added");
    expect(r.output.map((i) => i.call_id)).toEqual(added.map((e) => e.item.call_id));
    for (const item of r.output) {
      const deltas = ofType(events, "response.function_call_arguments.delta").filter((e) => e.item_id === item.id);
      expect(item.arguments).toBe(deltas.map((e) => e.delta).join(""));
      expect(() => JSON.parse(item.arguments as string)).not.toThrow();
    }
    expect(r.output_text).toBe("");
    expect(r.usage).toEqual(only(events, "response.completed").response.usage);
  });

  test("reasoning-then-call: reasoning item first, the call second, usage with reasoning tokens", () => {
    const events = fixtureEvents("reasoning-then-call");
    const r = collect(events).result();
    expect(r.output.map((i) => i.type)).toEqual(["reasoning", "function_call"]);
    expect(r.usage?.output_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
    expect(r.usage?.output_tokens).toBeGreaterThanOrEqual(r.usage!.output_tokens_details!.reasoning_tokens!);
    expect(r.usage).toEqual(usageOf(only(events, "response.completed")));
  });

  test("empty-output-completed: the output is rebuilt from the item events", () => {
    const events = fixtureEvents("empty-output-completed");
    expect(only(events, "response.completed").response.output).toEqual([]);
    const r = collect(events).result();
    expect(r.status).toBe("completed");
    expect(r.output).toEqual(ofType(events, "response.output_item.done").map((e) => e.item));
    expect(r.output_text).toBe(deltaText(events));
    expect(r.output_text.length).toBeGreaterThan(0);
  });

  test("incomplete-max-tokens: status, incomplete_details and usage come from response.incomplete", () => {
    const events = fixtureEvents("incomplete-max-tokens");
    const terminal = only(events, "response.incomplete");
    const c = collect(events);
    expect(c.terminal).toBe(terminal);
    const r = c.result();
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.usage).toEqual(terminal.response.usage);
    expect(r.output_text).toBe(deltaText(events));
  });

  test("error-nested: the failed response with its error", () => {
    const events = fixtureEvents("error-nested");
    const failed = only(events, "response.failed");
    const r = collect(events).result();
    expect(r.status).toBe("failed");
    expect(r.error).toEqual(failed.response.error);
    expect(r.output).toEqual([]);
    expect(r.usage).toBeNull();
  });

  test("error-flat: no terminal event, yet the reply is failed and keeps the partial text", () => {
    const events = fixtureEvents("error-flat");
    const errorEvent = only(events, "error");
    const c = collect(events);
    expect(c.terminal).toBeNull();
    const r = c.result();
    expect(r.status).toBe("failed");
    expect(r.error).toEqual({ code: errorEvent.code, message: errorEvent.message });
    expect(r.id).toBe(only(events, "response.created").response.id);
    expect(r.output).toHaveLength(1);
    expect(r.output[0].status).toBe("incomplete");
    expect(r.output_text).toBe(deltaText(events));
  });

  test("crlf-text: same result as the LF framing would give", () => {
    const events = fixtureEvents("crlf-text");
    const r = collect(events).result();
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe(deltaText(events));
  });
});

describe("createResponseCollector: accumulation", () => {
  for (const name of ["text", "parallel-tools", "reasoning-then-call", "incomplete-max-tokens"]) {
    test(`${name}: without any .done event, the same content is rebuilt from .added and deltas`, () => {
      const events = fixtureEvents(name);
      const full = collect(events).result();
      const rebuilt = collect(withoutDoneEvents(events)).result();
      expect(rebuilt.output.map((i) => i.status)).toEqual(full.output.map(() => "incomplete"));
      const strip = (items: any[]) =>
        items.map(({ status, encrypted_content, ...rest }) => ({
          ...rest,
          ...(Array.isArray(rest.content)
            ? { content: rest.content.map(({ logprobs, ...p }: any) => p) }
            : {}),
        }));
      expect(strip(rebuilt.output)).toEqual(strip(full.output));
      expect(rebuilt.output_text).toBe(full.output_text);
    });
  }

  test("items are ordered by output_index, not by arrival", () => {
    const events = fixtureEvents("parallel-tools");
    const second = events.filter((e) => e.output_index === 1);
    const rest = events.filter((e) => e.output_index !== 1);
    const firstItemEvent = rest.findIndex((e) => e.output_index === 0);
    const reordered = [...rest.slice(0, firstItemEvent), ...second, ...rest.slice(firstItemEvent)];
    const emptied = reordered.map((e) =>
      e.type === "response.completed" ? { ...e, response: { ...e.response, output: [] } } : e,
    );
    const r = collect(emptied).result();
    expect(r.output.map((i) => i.id)).toEqual(
      [0, 1].map((i) => events.find((e) => e.type === "response.output_item.added" && e.output_index === i)!.item.id),
    );
  });

  test("delta events that lost output_index are placed by item_id", () => {
    const r = collect([
      { type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", role: "assistant", content: [] } },
      { type: "response.output_text.delta", item_id: "msg_1", content_index: 0, delta: "Hel" },
      { type: "response.output_text.delta", item_id: "msg_1", content_index: 0, delta: "lo" },
    ]).result();
    expect(r.output_text).toBe("Hello");
  });

  test("deltas for an item whose .added never came still produce an item", () => {
    const r = collect([
      { type: "response.output_text.delta", item_id: "msg_9", output_index: 0, content_index: 0, delta: "orphan" },
      { type: "response.function_call_arguments.delta", item_id: "fc_9", output_index: 1, delta: '{"a":1}' },
    ]).result();
    expect(r.output.map((i) => i.type)).toEqual(["message", "function_call"]);
    expect(r.output[0].id).toBe("msg_9");
    expect(r.output_text).toBe("orphan");
    expect(r.output[1].arguments).toBe('{"a":1}');
  });

  test("output_text.done wins over the deltas, content_part.done wins over both", () => {
    const base = [
      { type: "response.output_item.added", output_index: 0, item: { id: "m", type: "message", role: "assistant", content: [] } },
      { type: "response.output_text.delta", item_id: "m", output_index: 0, content_index: 0, delta: "draft" },
      { type: "response.output_text.done", item_id: "m", output_index: 0, content_index: 0, text: "final" },
    ];
    expect(collect(base).result().output_text).toBe("final");
    const part = { type: "output_text", text: "part", annotations: [{ type: "url_citation" }] };
    const r = collect([...base, { type: "response.content_part.done", item_id: "m", output_index: 0, content_index: 0, part }]).result();
    expect(r.output[0].content).toEqual([part]);
  });

  test("function_call_arguments.done wins over the argument deltas of an unfinished item", () => {
    const r = collect([
      { type: "response.output_item.added", output_index: 0, item: { id: "fc", type: "function_call", call_id: "c", name: "f", arguments: "" } },
      { type: "response.function_call_arguments.delta", item_id: "fc", output_index: 0, delta: '{"q":' },
      { type: "response.function_call_arguments.done", item_id: "fc", output_index: 0, arguments: '{"q":"full"}' },
    ]).result();
    expect(r.output[0]).toMatchObject({ call_id: "c", name: "f", arguments: '{"q":"full"}', status: "incomplete" });
  });

  test("refusal deltas become a refusal part, not output_text", () => {
    const r = collect([
      { type: "response.output_item.added", output_index: 0, item: { id: "m", type: "message", role: "assistant", content: [] } },
      { type: "response.refusal.delta", item_id: "m", output_index: 0, content_index: 0, delta: "I can't" },
      { type: "response.refusal.delta", item_id: "m", output_index: 0, content_index: 0, delta: " help." },
    ]).result();
    expect(r.output[0].content).toEqual([{ type: "refusal", refusal: "I can't help." }]);
    expect(r.output_text).toBe("");
  });

  test("parts arriving out of content_index order are ordered", () => {
    const r = collect([
      { type: "response.output_item.added", output_index: 0, item: { id: "m", type: "message", role: "assistant", content: [] } },
      { type: "response.output_text.delta", item_id: "m", output_index: 0, content_index: 1, delta: "B" },
      { type: "response.output_text.delta", item_id: "m", output_index: 0, content_index: 0, delta: "A" },
    ]).result();
    expect(r.output_text).toBe("AB");
  });
});

describe("createResponseCollector: terminal output versus accumulated items", () => {
  const events = fixtureEvents("parallel-tools");
  const completed = only(events, "response.completed");
  const withTerminalOutput = (output: unknown[]) =>
    events.map((e) => (e === completed ? { ...e, response: { ...e.response, output } } : e));
  const accumulated = ofType(events, "response.output_item.done").map((e) => e.item);

  test("a terminal output with fewer items loses to the accumulated items", () => {
    expect(collect(withTerminalOutput([accumulated[0]])).result().output).toEqual(accumulated);
  });

  test("a terminal output with as many items but less content loses", () => {
    const truncated = accumulated.map((i) => ({ ...i, arguments: "" }));
    expect(collect(withTerminalOutput(truncated)).result().output).toEqual(accumulated);
  });

  test("an equally complete terminal output wins, keeping fields the deltas never carry", () => {
    const richer = accumulated.map((i) => ({ ...i, extra_upstream_field: { kept: true } }));
    expect(collect(withTerminalOutput(richer)).result().output).toEqual(richer);
  });

  test("a terminal output with more items wins", () => {
    const more = [...accumulated, { id: "fc_x", type: "function_call", call_id: "call_x", name: "n", arguments: "{}" }];
    expect(collect(withTerminalOutput(more)).result().output).toEqual(more);
  });

  test("a terminal output is used when no item events were seen at all", () => {
    const bare = [only(events, "response.created"), completed];
    expect(collect(bare).result().output).toEqual(completed.response.output);
  });
});

describe("createResponseCollector: response fields", () => {
  test("before any terminal event, fields come from response.created and terminal is null", () => {
    const events = fixtureEvents("text");
    const created = only(events, "response.created");
    const c = collect(events.slice(0, 5));
    expect(c.terminal).toBeNull();
    const r = c.result();
    expect(r.id).toBe(created.response.id);
    expect(r.model).toBe(created.response.model);
    expect(r.created_at).toBe(created.response.created_at);
    expect(r.status).toBe(created.response.status);
    expect(r.usage).toBeNull();
  });

  test("terminal fields override response.created ones", () => {
    const r = collect([
      { type: "response.created", response: { id: "resp_a", model: "m1", created_at: 1, status: "in_progress", usage: null, output: [] } },
      { type: "response.completed", response: { id: "resp_a", model: "m1-2026", created_at: 1, status: "completed", usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 }, output: [] } },
    ]).result();
    expect(r.model).toBe("m1-2026");
    expect(r.status).toBe("completed");
    expect(r.usage?.total_tokens).toBe(3);
  });

  test("events after the terminal event are ignored", () => {
    const events = fixtureEvents("text");
    const c = collect(events);
    const before = c.result();
    const terminal = c.terminal;
    c.push({ type: "response.output_item.added", output_index: 5, item: { id: "late", type: "message", role: "assistant", content: [] } });
    c.push({ type: "response.failed", response: { status: "failed" } });
    expect(c.terminal).toBe(terminal);
    expect(c.result()).toEqual(before);
  });

  test("an empty stream still yields a well-formed response object", () => {
    const r = collect([]).result();
    expect(r).toEqual({
      id: "",
      object: "response",
      created_at: 0,
      status: "in_progress",
      error: null,
      incomplete_details: null,
      model: "",
      output: [],
      usage: null,
      output_text: "",
    });
  });

  test("output_text matches openai-node over messages, refusals and non-message items", () => {
    const output = [
      { type: "reasoning", id: "rs", summary: [{ type: "summary_text", text: "thinking" }] },
      { type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "One. ", annotations: [] }, { type: "refusal", refusal: "no" }, { type: "output_text", text: "Two.", annotations: [] }] },
      { type: "function_call", id: "fc", call_id: "c", name: "f", arguments: '{"text":"x"}', status: "completed" },
      { type: "message", id: "m2", role: "assistant", status: "completed", content: [{ type: "output_text", text: " Three.", annotations: [] }] },
    ];
    const r = collect([{ type: "response.completed", response: { id: "r", status: "completed", output } }]).result();
    expect(r.output_text).toBe(sdkOutputText(output));
    expect(r.output_text).toBe("One. Two. Three.");
  });

  test("an error event before response.failed without an error object fills the error in", () => {
    const r = collect([
      { type: "error", error: { code: "server_error", message: "boom", param: null } },
      { type: "response.failed", response: { id: "r", status: "failed", error: null } },
    ]).result();
    expect(r.error).toEqual({ code: "server_error", message: "boom" });
  });
});

describe("streamErrorOf", () => {
  test("the flat error shape", () => {
    expect(streamErrorOf({ type: "error", code: "rate_limit_exceeded", message: "slow down", param: "model" })).toEqual({
      code: "rate_limit_exceeded",
      message: "slow down",
      param: "model",
      type: null,
    });
  });

  test("the nested error shape", () => {
    const ev = only(fixtureEvents("error-nested"), "error");
    expect(streamErrorOf(ev)).toEqual({ code: ev.error.code, message: ev.error.message, param: ev.error.param, type: ev.error.type ?? null });
  });

  test("response.failed reads response.error", () => {
    const ev = only(fixtureEvents("error-nested"), "response.failed");
    expect(streamErrorOf(ev)).toEqual({ code: ev.response.error.code, message: ev.response.error.message, param: null, type: ev.response.error.type ?? null });
  });

  test("fixtures' flat error event", () => {
    const ev = only(fixtureEvents("error-flat"), "error");
    expect(streamErrorOf(ev)).toEqual({ code: ev.code, message: ev.message, param: null, type: null });
  });

  test("missing fields get defaults", () => {
    const bare = streamErrorOf({ type: "error" })!;
    expect(bare.code).toBe("upstream_error");
    expect(bare.message.length).toBeGreaterThan(0);
    expect(bare.param).toBeNull();

    const failed = streamErrorOf({ type: "response.failed", response: { status: "failed", error: null } })!;
    expect(failed.code).toBe("upstream_error");
    expect(failed.message.length).toBeGreaterThan(0);

    expect(streamErrorOf({ type: "response.failed" })?.code).toBe("upstream_error");
  });

  test("a nested error without code falls back to its type; a numeric code becomes a string", () => {
    expect(streamErrorOf({ type: "error", error: { type: "server_error", code: null, message: "x" } })?.code).toBe("server_error");
    expect(streamErrorOf({ type: "error", code: 500, message: "x" })?.code).toBe("500");
  });

  test("an in-band error given as a plain string", () => {
    expect(streamErrorOf({ type: "error", error: "upstream exploded" })).toEqual({
      code: "upstream_error",
      message: "upstream exploded",
      param: null,
      type: null,
    });
  });

  test("non-error events have no error", () => {
    for (const ev of fixtureEvents("text")) expect(streamErrorOf(ev)).toBeNull();
    expect(streamErrorOf(only(fixtureEvents("incomplete-max-tokens"), "response.incomplete"))).toBeNull();
  });
});

describe("usageOf", () => {
  test("reads usage from completed, incomplete and failed events", () => {
    const completed = only(fixtureEvents("reasoning-then-call"), "response.completed");
    expect(usageOf(completed)).toEqual(completed.response.usage);
    const incomplete = only(fixtureEvents("incomplete-max-tokens"), "response.incomplete");
    expect(usageOf(incomplete)).toEqual(incomplete.response.usage);
    const usage = { input_tokens: 5, output_tokens: 0, total_tokens: 5 };
    expect(usageOf({ type: "response.failed", response: { usage } })).toEqual(usage);
  });

  test("null for non-terminal events and for missing usage", () => {
    const events = fixtureEvents("text");
    const created = { ...only(events, "response.created") };
    created.response = { ...created.response, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
    expect(usageOf(created)).toBeNull();
    expect(usageOf(only(fixtureEvents("error-nested"), "response.failed"))).toBeNull();
    expect(usageOf({ type: "response.completed" })).toBeNull();
  });
});

describe("createResponseCollector: hostile terminal output (property-test regressions)", () => {
  test("a null item or a text that is not a string in the terminal output does not throw; output_text takes strings only", () => {
    // Found by tests/property/collect: the terminal `output` is taken as the upstream sent it, and
    // output_text read `item.type` of a null item (TypeError), and joined non-string texts ({"toString": 0} threw).
    const output = JSON.parse(
      '[null, 7, {"type":"message","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":{"toString":0}},{"type":"output_text","text":5},null]}]',
    );
    const c = collect([{ type: "response.completed", response: { status: "completed", output } }]);
    const r = c.result();
    expect(r.output).toBe(output);
    expect(r.output_text).toBe("a");
  });
});
