import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/errors";
import { createResponseCollector } from "../../src/gateway/wire/collect";
import type { ResponseObject, ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { responsesToChat } from "../../src/gateway/translate/responses-to-chat";
import { jsonObjectOf, junkJson, orJunk, runs } from "./arbitraries";
import { anyEvents } from "./responses-stream-model";

const OPTS = { id: "chatcmpl-1", created: 1700000000, model: "gpt-x" };
const FINISH_REASONS = ["stop", "length", "tool_calls", "content_filter"];

function toChatOrAppError(response: unknown): ReturnType<typeof responsesToChat> | AppError {
  try {
    return responsesToChat(response as ResponseObject, OPTS);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

function checkCompletion(c: ReturnType<typeof responsesToChat>): void {
  expect(c).toMatchObject({ ...OPTS, object: "chat.completion" });
  expect(c.choices.length).toBe(1);
  const { message, finish_reason } = c.choices[0];
  expect(FINISH_REASONS).toContain(finish_reason);
  expect(message.role).toBe("assistant");
  expect(message.content === null || typeof message.content === "string").toBe(true);
  expect(message.refusal === null || typeof message.refusal === "string").toBe(true);
  if (message.tool_calls) {
    expect(message.tool_calls.length).toBeGreaterThan(0);
    for (const call of message.tool_calls) {
      expect(call.type).toBe("function");
      // A client JSON.parses the arguments: never the empty string.
      expect(typeof call.function.arguments).toBe("string");
      expect(call.function.arguments.trim()).not.toBe("");
    }
  }
  if (finish_reason === "tool_calls") expect(message.tool_calls?.length).toBeGreaterThan(0);
  if (c.usage) {
    const u = c.usage;
    for (const n of [u.prompt_tokens, u.completion_tokens, u.total_tokens, u.prompt_tokens_details.cached_tokens, u.completion_tokens_details.reasoning_tokens]) {
      expect(typeof n).toBe("number");
    }
  }
  JSON.stringify(c);
}

/** Response objects as the collector could hand them over, with junk in any field. */
const junkResponse = jsonObjectOf(
  {
    status: orJunk(fc.constantFrom("completed", "incomplete", "failed", "in_progress")),
    error: orJunk(jsonObjectOf({ code: orJunk(fc.constantFrom("server_error", "context_length_exceeded")), message: orJunk(fc.constant("boom")) })),
    incomplete_details: orJunk(jsonObjectOf({ reason: orJunk(fc.constantFrom("max_output_tokens", "content_filter")) })),
    output: orJunk(
      fc.array(
        orJunk(
          jsonObjectOf({
            type: orJunk(fc.constantFrom("message", "function_call", "reasoning")),
            content: orJunk(fc.array(orJunk(jsonObjectOf({ type: fc.constantFrom("output_text", "refusal"), text: junkJson(), refusal: junkJson() })), { maxLength: 3 })),
            summary: orJunk(fc.array(orJunk(jsonObjectOf({ type: fc.constant("summary_text"), text: junkJson() })), { maxLength: 2 })),
            call_id: junkJson(),
            name: junkJson(),
            arguments: junkJson(),
          }),
        ),
        { maxLength: 4 },
      ),
    ),
    usage: orJunk(jsonObjectOf({ input_tokens: orJunk(fc.nat()), output_tokens: orJunk(fc.nat()), total_tokens: orJunk(fc.nat()) })),
  },
  ["output", "status"],
);

describe("responses-to-chat", () => {
  test("any event sequence, collected: a well-formed chat.completion or an AppError; never another error", () => {
    fc.assert(
      fc.property(anyEvents, (events: ResponsesStreamEvent[]) => {
        const collector = createResponseCollector();
        for (const ev of events) collector.push(ev);
        const r = toChatOrAppError(collector.result());
        if (r instanceof AppError) {
          expect(r.status).toBeGreaterThanOrEqual(400);
          return;
        }
        checkCompletion(r);
      }),
      runs(600),
    );
  });

  test("any response object: a well-formed chat.completion or an AppError; an unfinished or failed one is never a reply", () => {
    fc.assert(
      fc.property(junkResponse, (response) => {
        const r = toChatOrAppError(response);
        const status = (response as Record<string, unknown>).status;
        if (status !== "completed" && status !== "incomplete") expect(r).toBeInstanceOf(AppError);
        if (r instanceof AppError) return;
        checkCompletion(r);
      }),
      runs(800),
    );
  });
});
