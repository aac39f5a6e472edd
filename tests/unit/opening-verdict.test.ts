/** What holds a stream's opening and what commits it to its account (gateway/upstream/rules/opening.ts). */
import { describe, expect, test } from "bun:test";
import { openingVerdict } from "../../src/gateway/upstream/rules/opening";
import { classify } from "../../src/gateway/wire/stream-event";

const ev = (type: string, fields: Record<string, unknown> = {}) => {
  const e = classify({ event: type, data: JSON.stringify({ type, ...fields }) });
  if (e === "done") throw new Error("done");
  return openingVerdict(e);
};

describe("opening verdict", () => {
  test("opening events and empty starts are held", () => {
    expect(ev("response.created", { response: { id: "r" } })).toBe("hold");
    expect(ev("response.in_progress", { response: { id: "r" } })).toBe("hold");
    expect(ev("response.queued", { response: { id: "r" } })).toBe("hold");
    expect(ev("response.output_item.added", { item: { type: "message", content: [] } })).toBe("hold");
    expect(ev("response.output_item.added", { item: { type: "function_call", arguments: "" } })).toBe("hold");
    expect(ev("response.content_part.added", { part: { type: "output_text", text: "" } })).toBe("hold");
  });

  test("content commits: deltas, items with content, finished items, answers, anything unknown", () => {
    expect(ev("response.output_text.delta", { delta: "hi" })).toBe("commit");
    expect(ev("response.function_call_arguments.delta", { delta: "{" })).toBe("commit");
    expect(ev("response.reasoning_summary_text.delta", { delta: "…" })).toBe("commit");
    expect(ev("response.output_item.added", { item: { type: "message", content: [{ type: "output_text", text: "whole" }] } })).toBe("commit");
    expect(ev("response.output_item.added", { item: { type: "function_call", arguments: "{}" } })).toBe("commit");
    expect(ev("response.output_item.done", { item: { type: "message", content: [] } })).toBe("commit");
    expect(ev("response.completed", { response: { id: "r", status: "completed", output: [] } })).toBe("commit");
    expect(ev("response.something_new", {})).toBe("commit");
  });

  test("failures before content: an error event, response.failed", () => {
    expect(ev("error", { code: "insufficient_quota", message: "quota" })).toEqual({ failed: { code: "insufficient_quota", message: "quota" } });
    expect(ev("response.failed", { response: { id: "r", status: "failed", error: { code: "server_error", message: "boom" } } })).toEqual({ failed: { code: "server_error", message: "boom" } });
  });
});
