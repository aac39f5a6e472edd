/**
 * Wire types of the Anthropic Messages API that Gantry writes (the reply and the stream's events), typed exactly
 * enough that they match what @anthropic-ai/sdk reads (`Message`, `RawMessageStreamEvent`). Requests arrive as
 * untrusted JSON and are checked field by field in messages-to-responses.ts.
 */

export type MessagesStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export type MessagesContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
}

export interface MessagesMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** Anthropic's error types, as its SDKs classify them. */
export type MessagesErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface MessagesErrorBody {
  type: "error";
  error: { type: MessagesErrorType; message: string };
}
