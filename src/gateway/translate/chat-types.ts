/**
 * Wire types of the Chat Completions API as the gateway sees them. Requests are typed loosely because they
 * arrive as untrusted JSON and are validated field by field in chat-to-responses.ts; replies are typed
 * exactly enough that they match what the official openai SDK (`ChatCompletion`, `ChatCompletionChunk`)
 * expects to read.
 */

import type { JsonObject } from "../wire/responses-types";

export type ChatRole = "system" | "developer" | "user" | "assistant" | "tool" | "function";

export interface ChatRequestToolCall {
  id: string;
  type?: "function";
  function: { name: string; arguments?: string | JsonObject };
}

export interface ChatRequestMessage {
  role: ChatRole;
  content?: string | JsonObject[] | null;
  name?: string;
  refusal?: string | null;
  tool_calls?: ChatRequestToolCall[];
  tool_call_id?: string;
  /** Legacy (pre-tools) single function call on an assistant message. */
  function_call?: { name: string; arguments?: string } | null;
  [key: string]: unknown;
}

export interface ChatRequest {
  model: string;
  messages: ChatRequestMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [key: string]: unknown } | null;
  [key: string]: unknown;
}

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatCompletionMessage {
  role: "assistant";
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatToolCall[];
  /** Reasoning summary text; a de-facto extension (DeepSeek, vLLM, new-api), present only when non-empty. */
  reasoning_content?: string;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: ChatCompletionMessage;
    logprobs: ChatChoiceLogprobs | null;
    finish_reason: ChatFinishReason;
  }>;
  usage?: ChatUsage;
}

/** A tool-call delta: the first one of a call carries id/type/name, later ones only argument pieces. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

export interface ChatChunkDelta {
  role?: "assistant";
  content?: string;
  refusal?: string;
  reasoning_content?: string;
  tool_calls?: ChatToolCallDelta[];
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: ChatChunkDelta;
    logprobs: ChatChoiceLogprobs | null;
    finish_reason: ChatFinishReason | null;
  }>;
  /** Present only when the client asked for `stream_options.include_usage`: null except on the usage chunk. */
  usage?: ChatUsage | null;
}

/** An in-band error frame; the openai SDK throws an APIError when a data line has an `error` key. */
export interface ChatStreamError {
  error: { message: string; type: string; code: string; param: string | null };
}

/** `choices[].logprobs` when the caller asked for them (logprobs: true) and the upstream sent them. */
export interface ChatChoiceLogprobs {
  content: Array<{ token: string; logprob: number; bytes: number[] | null; top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }> }>;
  refusal: null;
}
