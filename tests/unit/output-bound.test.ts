/** The output bound Gantry enforces for an upstream that refused `max_output_tokens` (stream/output-bound.ts). */
import { describe, expect, test } from "bun:test";
import { OutputBound, utf8Prefix } from "../../src/gateway/wire/output-bound";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";

const run = (bound: OutputBound, events: object[]) => events.flatMap((e) => bound.pass(e as ResponsesStreamEvent));

describe("utf8Prefix", () => {
  test("cuts between code points, never inside one", () => {
    expect(utf8Prefix("abc", 2)).toBe("ab");
    expect(utf8Prefix("é€😀", 1)).toBe("");
    expect(utf8Prefix("é€😀", 5)).toBe("é€");
    expect(utf8Prefix("é€😀", 8)).toBe("é€");
    expect(utf8Prefix("é€😀", 9)).toBe("é€😀");
    expect(utf8Prefix("abc", 0)).toBe("");
  });
});

describe("OutputBound", () => {
  test("events within the bound pass as they are (the same objects)", () => {
    const bound = new OutputBound(5, 7);
    const events = [
      { type: "response.output_item.added", output_index: 0, item: { id: "m", type: "message", role: "assistant", content: [] } },
      { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "m", delta: "12345678" },
    ];
    const out = run(bound, events);
    expect(out).toHaveLength(2);
    out.forEach((e, i) => expect(e).toBe(events[i] as ResponsesStreamEvent));
    expect(bound.reached).toBe(false);
  });

  test("a function call cut mid-arguments: arguments done with what fits, the item incomplete, no sequence numbers invented", () => {
    const bound = new OutputBound(2, 10);
    const out = run(bound, [
      { type: "response.created", response: { id: "r", object: "response", status: "in_progress", model: "m", output: [] } },
      { type: "response.output_item.added", output_index: 0, item: { id: "fc", type: "function_call", call_id: "c", name: "f", arguments: "" } },
      { type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc", delta: '{"a":' },
      { type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc", delta: '"long value"}' },
      { type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc", delta: "never seen" },
    ]);
    expect(out.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    expect(out[3]!.delta).toBe('"lo');
    expect(out[4]!.arguments).toBe('{"a":"lo');
    expect(out[5]!.item).toMatchObject({ type: "function_call", status: "incomplete", arguments: '{"a":"lo', call_id: "c" });
    expect(out.every((e) => e.sequence_number === undefined)).toBe(true);
    const end = out[6]!.response;
    expect(end).toMatchObject({ id: "r", status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(end.usage).toEqual({ input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 });
    expect(end.output).toEqual([out[5]!.item]);
    expect("output_text" in end).toBe(false);
  });

  test("a reasoning summary counts too; a finished item is not closed again; the open summary part is", () => {
    const bound = new OutputBound(1, 0);
    const out = run(bound, [
      { type: "response.output_item.added", sequence_number: 3, output_index: 0, item: { id: "a", type: "message", role: "assistant", content: [] } },
      { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: { id: "a", type: "message", role: "assistant", status: "completed", content: [] } },
      { type: "response.output_item.added", sequence_number: 5, output_index: 1, item: { id: "rs", type: "reasoning", summary: [] } },
      { type: "response.reasoning_summary_part.added", sequence_number: 6, output_index: 1, item_id: "rs", summary_index: 0, part: { type: "summary_text", text: "" } },
      { type: "response.reasoning_summary_text.delta", sequence_number: 7, output_index: 1, item_id: "rs", summary_index: 0, delta: "thinking" },
    ]);
    expect(out.slice(4).map((e) => [e.type, e.sequence_number])).toEqual([
      ["response.reasoning_summary_text.delta", 7],
      ["response.reasoning_summary_text.done", 8],
      ["response.reasoning_summary_part.done", 9],
      ["response.output_item.done", 10],
      ["response.incomplete", 11],
    ]);
    expect(out[4]!.delta).toBe("thin");
    expect(out[6]!.part).toEqual({ type: "summary_text", text: "thin" });
    expect(out[7]!.output_index).toBe(1);
    // Nothing passes once the bound was reached.
    expect(bound.pass({ type: "response.completed", response: {} })).toEqual([]);
  });
});
