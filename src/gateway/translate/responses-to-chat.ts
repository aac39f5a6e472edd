/**
 * A finished Responses object -> a non-streaming `chat.completion`. The caller builds the response from
 * the upstream stream first (collect.ts), because the upstream's own terminal `output` can be empty.
 */

import { requireFinished } from "./require-finished";
import { chatLogprobs, type ChatLogprob } from "./logprobs";
import type { ResponseObject, ResponsesUsage } from "../wire/responses-types";
import type { ChatCompletion, ChatCompletionMessage, ChatFinishReason, ChatToolCall, ChatUsage } from "./chat-types";

export function responsesToChat(
  response: ResponseObject,
  opts: { id: string; created: number; model: string },
): ChatCompletion {
  requireFinished(response);

  const text: string[] = [];
  // Present only when the upstream sent them (the caller asked with logprobs: true).
  let logprobs: ChatLogprob[] | null = null;
  const refusals: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  // The output may come from the upstream's terminal event as is: items and parts are checked before use.
  for (const item of Array.isArray(response.output) ? response.output : []) {
    const it = item as Record<string, any> | null;
    if (it === null || typeof it !== "object") continue;
    if (it.type === "message") {
      for (const part of Array.isArray(it.content) ? it.content : []) {
        if (part?.type === "output_text" && typeof part.text === "string") {
          text.push(part.text);
          if (Array.isArray(part.logprobs) && part.logprobs.length > 0) (logprobs ??= []).push(...chatLogprobs(part.logprobs));
        }
        else if (part?.type === "refusal" && typeof part.refusal === "string") refusals.push(part.refusal);
      }
    } else if (it.type === "function_call") {
      toolCalls.push({
        id: it.call_id,
        type: "function",
        function: { name: it.name, arguments: normalizeArguments(it.arguments) },
      });
    } else if (it.type === "reasoning") {
      for (const part of Array.isArray(it.summary) ? it.summary : []) {
        if (typeof part?.text === "string" && part.text !== "") reasoning.push(part.text);
      }
    }
  }

  const message: ChatCompletionMessage = {
    role: "assistant",
    content: text.length > 0 ? text.join("") : null,
    refusal: refusals.length > 0 ? refusals.join("") : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("\n\n");

  const completion: ChatCompletion = {
    id: opts.id,
    object: "chat.completion",
    created: opts.created,
    model: opts.model,
    choices: [{ index: 0, message, logprobs: logprobs ? { content: logprobs, refusal: null } : null, finish_reason: finishReason(response, toolCalls.length > 0) }],
  };
  const usage = usageToChat(response.usage);
  if (usage) completion.usage = usage;
  return completion;
}

/**
 * The reason a truncated response stopped wins over `tool_calls`: a call cut off by the token limit has
 * unfinished arguments, and `tool_calls` would invite the client to execute it (Chat reports `length`).
 */
export function finishReason(response: Pick<ResponseObject, "status" | "incomplete_details">, sawToolCall: boolean): ChatFinishReason {
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason;
    if (reason === "max_output_tokens") return "length";
    if (reason === "content_filter") return "content_filter";
  }
  return sawToolCall ? "tool_calls" : "stop";
}

/** Clients JSON.parse tool arguments; an argument-less call arrives as "" and would not parse. */
export function normalizeArguments(args: unknown): string {
  return typeof args === "string" && args.trim() !== "" ? args : "{}";
}

export function usageToChat(u: ResponsesUsage | null | undefined): ChatUsage | null {
  if (!u) return null;
  // Numbers only: usage is the upstream's JSON, and `+` on an object such as {"toString": 0} throws.
  const count = (v: unknown): number => (typeof v === "number" ? v : 0);
  const prompt = count(u.input_tokens);
  const completion = count(u.output_tokens);
  return {
    prompt_tokens: prompt,
    // output_tokens already includes reasoning tokens, exactly like chat's completion_tokens.
    completion_tokens: completion,
    total_tokens: typeof u.total_tokens === "number" ? u.total_tokens : prompt + completion,
    prompt_tokens_details: { cached_tokens: count(u.input_tokens_details?.cached_tokens) },
    completion_tokens_details: { reasoning_tokens: count(u.output_tokens_details?.reasoning_tokens) },
  };
}
