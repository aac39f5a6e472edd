/**
 * Wire types of the Responses API as the gateway sees them. Deliberately loose: upstream objects carry
 * fields we do not model, and those must pass through untouched, so every object keeps an index signature.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: any };

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens: number;
  /** output_tokens already includes reasoning tokens. */
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens: number;
  [key: string]: unknown;
}

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations?: unknown[];
  [key: string]: unknown;
}

export interface MessageItem {
  id?: string;
  type: "message";
  role: "assistant" | "user" | "system" | "developer";
  status?: string;
  content: Array<OutputTextPart | { type: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

export interface FunctionCallItem {
  id?: string;
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  status?: string;
  [key: string]: unknown;
}

export interface ReasoningItem {
  id?: string;
  type: "reasoning";
  summary: Array<{ type: "summary_text"; text: string }>;
  encrypted_content?: string | null;
  [key: string]: unknown;
}

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem | { type: string; [key: string]: unknown };

export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: "in_progress" | "completed" | "failed" | "incomplete" | string;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  model: string;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  [key: string]: unknown;
}

/**
 * One decoded stream event: the JSON payload of a `data:` line. Every event has `type`; upstream events
 * carry `sequence_number`. Known types:
 *   response.created | response.in_progress | response.completed | response.incomplete | response.failed
 *     -> { response: ResponseObject }
 *   response.output_item.added | response.output_item.done -> { output_index, item }
 *   response.content_part.added | response.content_part.done -> { item_id, output_index, content_index, part }
 *   response.output_text.delta -> { item_id, output_index, content_index, delta }
 *   response.output_text.done -> { item_id, output_index, content_index, text }
 *   response.function_call_arguments.delta -> { item_id, output_index, delta }
 *   response.function_call_arguments.done -> { item_id, output_index, arguments }
 *   response.reasoning_summary_part.added/.done -> { item_id, output_index, summary_index, part }
 *   response.reasoning_summary_text.delta -> { item_id, output_index, summary_index, delta }
 *   response.reasoning_summary_text.done -> { item_id, output_index, summary_index, text }
 *   error -> flat { code, message, param } or nested { error: { code, message, param } }
 */
export interface ResponsesStreamEvent {
  type: string;
  sequence_number?: number;
  [key: string]: any;
}

export const TERMINAL_EVENT_TYPES = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** A function tool definition in the Responses request shape (flat, not nested under `function`). */
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description?: string;
  parameters?: JsonObject;
  strict?: boolean;
  [key: string]: unknown;
}

/** The Responses request body, loosely typed: unknown fields are kept and passed on. */
export interface ResponsesRequest {
  model: string;
  input?: string | JsonObject[];
  instructions?: string;
  stream?: boolean;
  tools?: JsonObject[];
  tool_choice?: string | JsonObject;
  include?: string[];
  parallel_tool_calls?: boolean;
  max_output_tokens?: number;
  reasoning?: { effort?: string; summary?: string; [key: string]: unknown };
  [key: string]: unknown;
}
