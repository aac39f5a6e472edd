import { describe, expect, test } from "bun:test";
import type { ChatCompletion as SdkChatCompletion } from "openai/resources/chat/completions";
import { AppError } from "../../src/errors";
import type { OutputItem, ResponseObject, ResponsesUsage } from "../../src/gateway/wire/responses-types";
import { responsesToChat, usageToChat } from "../../src/gateway/translate/responses-to-chat";

const OPTS = { id: "chatcmpl-test1", created: 1_700_000_000, model: "gpt-client-name" };

const USAGE: ResponsesUsage = {
  input_tokens: 92,
  input_tokens_details: { cached_tokens: 64 },
  output_tokens: 719,
  output_tokens_details: { reasoning_tokens: 704 },
  total_tokens: 811,
};

function response(output: OutputItem[], over: Partial<ResponseObject> = {}): ResponseObject {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1_749_761_604,
    status: "completed",
    error: null,
    incomplete_details: null,
    model: "upstream-model",
    output,
    usage: USAGE,
    ...over,
  };
}

const message = (...texts: string[]): OutputItem => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  status: "completed",
  content: texts.map((text) => ({ type: "output_text", text, annotations: [] })),
});

const call = (callId: string, name: string, args: string): OutputItem => ({
  id: `fc_${callId}`,
  type: "function_call",
  status: "completed",
  call_id: callId,
  name,
  arguments: args,
});

const reasoning = (...summaries: string[]): OutputItem => ({
  id: "rs_1",
  type: "reasoning",
  summary: summaries.map((text) => ({ type: "summary_text" as const, text })),
});

describe("responsesToChat", () => {
  test("a text reply becomes one assistant choice with stop and mapped usage", () => {
    const completion: SdkChatCompletion = responsesToChat(response([message("Hello", ", world")]), OPTS);
    expect(completion).toEqual({
      id: OPTS.id,
      object: "chat.completion",
      created: OPTS.created,
      model: OPTS.model,
      choices: [
        { index: 0, message: { role: "assistant", content: "Hello, world", refusal: null }, logprobs: null, finish_reason: "stop" },
      ],
      usage: {
        prompt_tokens: 92,
        completion_tokens: 719,
        total_tokens: 811,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 704 },
      },
    });
  });

  test("parallel calls after a reasoning item become tool_calls keyed by call_id, in order", () => {
    const completion = responsesToChat(
      response([reasoning("Need both cities.", "Call weather twice."), call("call_p", "weather", '{"city":"Paris"}'), call("call_r", "weather", "")]),
      OPTS,
    );
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: "call_p", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
      // An argument-less call must still be parseable JSON for the client.
      { id: "call_r", type: "function", function: { name: "weather", arguments: "{}" } },
    ]);
    expect(choice.message.reasoning_content).toBe("Need both cities.\n\nCall weather twice.");
  });

  test("reasoning_content and tool_calls are absent when there is none", () => {
    const msg = responsesToChat(response([reasoning(), message("ok")]), OPTS).choices[0].message;
    expect("reasoning_content" in msg).toBe(false);
    expect("tool_calls" in msg).toBe(false);
  });

  test("a refusal part fills message.refusal", () => {
    const refused: OutputItem = { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "I can't help." }] };
    const msg = responsesToChat(response([refused]), OPTS).choices[0].message;
    expect(msg).toEqual({ role: "assistant", content: null, refusal: "I can't help." });
  });

  test("incomplete by max_output_tokens ends with length and keeps its usage", () => {
    const partialUsage = { input_tokens: 5, output_tokens: 16, total_tokens: 21 };
    const completion = responsesToChat(
      response([message("The answer is")], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: partialUsage }),
      OPTS,
    );
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.choices[0].message.content).toBe("The answer is");
    expect(completion.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 16,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test("a truncated tool call reports length, not tool_calls; content_filter maps through", () => {
    const cut = response([call("call_1", "f", '{"a":')], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(responsesToChat(cut, OPTS).choices[0].finish_reason).toBe("length");
    const filtered = response([message("")], { status: "incomplete", incomplete_details: { reason: "content_filter" } });
    expect(responsesToChat(filtered, OPTS).choices[0].finish_reason).toBe("content_filter");
  });

  test("a failed response throws with the upstream code instead of becoming a stop", () => {
    let thrown: unknown;
    try {
      responsesToChat(response([], { status: "failed", error: { code: "context_length_exceeded", message: "Too long." } }), OPTS);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("context_length_exceeded");
    expect((thrown as AppError).message).toBe("Too long.");
  });

  test("a failed response gets the status a stream failure with the same code gets (caller fault 400, rate limit 429, else 502)", () => {
    const statusOf = (code: string) => {
      try {
        responsesToChat(response([], { status: "failed", error: { code, message: "m" } }), OPTS);
      } catch (e) {
        return [(e as AppError).status, (e as AppError).type, (e as AppError).code];
      }
      return null;
    };
    expect(statusOf("context_length_exceeded")).toEqual([400, "invalid_request_error", "context_length_exceeded"]);
    expect(statusOf("rate_limit_exceeded")).toEqual([429, "invalid_request_error", "rate_limit_exceeded"]);
    expect(statusOf("server_error")).toEqual([502, "upstream_error", "server_error"]);
  });

  test("an unfinished response throws", () => {
    expect(() => responsesToChat(response([message("half")], { status: "in_progress" }), OPTS)).toThrow(AppError);
  });

  test("no usage leaves the usage key out", () => {
    expect("usage" in responsesToChat(response([message("x")], { usage: null }), OPTS)).toBe(false);
  });
});

describe("usageToChat", () => {
  test("null stays null", () => {
    expect(usageToChat(null)).toBeNull();
  });

  test("null detail objects count as zero", () => {
    expect(
      usageToChat({ input_tokens: 3, input_tokens_details: null, output_tokens: 4, output_tokens_details: null, total_tokens: 7 }),
    ).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });
});

describe("hostile upstream objects (property-test regressions)", () => {
  // Found by tests/property/responses-to-chat: each of these threw a TypeError (a 500) instead of a reply or an AppError.
  const hostile = () => JSON.parse('{"toString": 0}');

  test("null items and parts or summaries that are not arrays are skipped", () => {
    const output = [null, { type: "message", content: 5 }, { type: "reasoning", summary: {} }, message("ok")] as unknown as OutputItem[];
    expect(responsesToChat(response(output), OPTS).choices[0].message.content).toBe("ok");
  });

  test("usage counts that are not numbers count as zero", () => {
    const usage = { input_tokens: 3, output_tokens: hostile(), total_tokens: hostile() } as unknown as ResponsesUsage;
    expect(usageToChat(usage)).toEqual({
      prompt_tokens: 3,
      completion_tokens: 0,
      total_tokens: 3,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test("a failed response whose error message or code is not a string still becomes an AppError", () => {
    let caught: unknown;
    try {
      responsesToChat(response([], { status: "failed", error: { code: hostile(), message: hostile() } }), OPTS);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe("upstream_error");
    expect((caught as AppError).message).toBe("The upstream response failed.");
  });
});
