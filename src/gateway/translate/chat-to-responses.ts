/**
 * Chat Completions request -> Responses request, for an upstream that only speaks Responses.
 *
 * Every chat field has one fate, decided here: mapped onto its Responses equivalent, consumed by the
 * gateway (`stream`, `stream_options`, `n` = 1, `modalities` = ["text"]), dropped (DROPPED_CHAT_FIELDS,
 * listed in the README), or refused with a 400 because ignoring it would silently return something
 * other than what the caller asked for (`n` > 1, audio output, web search, custom tools, audio input).
 * Fields this file does not know are ignored rather than forwarded: a chat-only field sent to a
 * Responses upstream would only turn into an upstream 400 the caller cannot act on.
 */

import type { JsonObject, ResponsesRequest } from "../wire/responses-types";
import { messagesToInput } from "./chat-messages-to-input";
import { invalid, isObject } from "./request-checks";
import { LOGPROBS_INCLUDE } from "./logprobs";

/** Chat fields accepted but not forwarded, each with the reason (the README lists these). */
export const DROPPED_CHAT_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  stop: "the Responses API has no stop sequences",
  seed: "the Responses API has no seed",
  presence_penalty: "the Responses API has no presence penalty",
  frequency_penalty: "the Responses API has no frequency penalty",
  logit_bias: "the Responses API has no logit bias",
  prediction: "the Responses API has no predicted outputs",
  store: "Responses `store` means server-side storage, which the upstream requires to be off",
  audio: "audio output settings; audio output itself (modalities: [\"audio\"]) is refused",
  moderation: "the Responses API has no per-request moderation setting",
  "messages[].name": "the Responses API has no participant names",
});

const PASS_THROUGH_FIELDS = [
  "temperature",
  "top_p",
  "user",
  "metadata",
  "service_tier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "safety_identifier",
] as const;

export interface ChatToResponsesResult {
  request: ResponsesRequest;
  /** What the client asked for; the upstream request itself always streams. */
  stream: boolean;
  /** `stream_options.include_usage` on a streaming request: send a final usage chunk. */
  includeUsage: boolean;
}

export function chatToResponses(body: unknown): ChatToResponsesResult {
  if (!isObject(body)) invalid("The request body must be a JSON object.", null);
  const model = body.model;
  if (typeof model !== "string" || model === "") invalid("`model` must be a non-empty string.", "model");

  const stream = optionalBoolean(body.stream, "stream") ?? false;
  const streamOptions = body.stream_options;
  if (streamOptions != null && !isObject(streamOptions)) invalid("`stream_options` must be an object.", "stream_options");
  const includeUsage = stream && streamOptions?.include_usage === true;

  checkRefusedFields(body);

  const { instructions, input } = messagesToInput(body.messages);
  const request: ResponsesRequest = { model, input, stream: true };
  if (instructions !== undefined) request.instructions = instructions;

  const tools = [...toolsToResponses(body.tools), ...legacyFunctionsToResponses(body.functions)];
  if (tools.length > 0) request.tools = tools;
  const toolChoice = toolChoiceToResponses(body.tool_choice) ?? legacyFunctionCallToResponses(body.function_call);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;
  const parallel = optionalBoolean(body.parallel_tool_calls, "parallel_tool_calls");
  if (parallel !== undefined) request.parallel_tool_calls = parallel;

  // max_completion_tokens replaced max_tokens in the chat API; when both are sent the newer one wins.
  const maxTokens =
    positiveInteger(body.max_completion_tokens, "max_completion_tokens") ?? positiveInteger(body.max_tokens, "max_tokens");
  if (maxTokens !== undefined) request.max_output_tokens = maxTokens;

  // logprobs: true asks the Responses API for them (include), top_logprobs says how many alternatives.
  const logprobs = optionalBoolean(body.logprobs, "logprobs");
  if (body.top_logprobs != null) {
    const n = body.top_logprobs;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 20) invalid("`top_logprobs` must be an integer from 0 to 20.", "top_logprobs");
    if (logprobs !== true) invalid("`logprobs` must be true when `top_logprobs` is set.", "logprobs");
    request.top_logprobs = n;
  }
  if (logprobs === true) request.include = [LOGPROBS_INCLUDE];

  const text = textConfig(body);
  if (text !== undefined) request.text = text;
  if (body.reasoning_effort != null) {
    if (typeof body.reasoning_effort !== "string") invalid("`reasoning_effort` must be a string.", "reasoning_effort");
    // Chat clients read reasoning as `delta.reasoning_content`, which only exists when the upstream streams a
    // summary; "auto" asks for one ("concise" was refused in practice, LiteLLM notes). No effort, no summary.
    request.reasoning =
      body.reasoning_effort === "none" ? { effort: body.reasoning_effort } : { effort: body.reasoning_effort, summary: "auto" };
  }
  for (const field of PASS_THROUGH_FIELDS) {
    if (body[field] != null) request[field] = body[field];
  }
  return { request, stream, includeUsage };
}

function checkRefusedFields(body: JsonObject): void {
  if (body.n != null) {
    if (!Number.isInteger(body.n) || body.n < 1) invalid("`n` must be a positive integer.", "n");
    if (body.n > 1) invalid("Only `n: 1` is supported: the upstream produces one choice per request.", "n");
  }
  if (body.modalities != null) {
    if (!Array.isArray(body.modalities) || body.modalities.some((m: unknown) => m !== "text")) {
      invalid("Only the `text` modality is supported.", "modalities");
    }
  }
  if (body.web_search_options != null) invalid("`web_search_options` is not supported.", "web_search_options");
}

// ---- tools -----------------------------------------------------------------------------------------------

function toolsToResponses(tools: unknown): JsonObject[] {
  if (tools == null) return [];
  if (!Array.isArray(tools)) invalid("`tools` must be an array.", "tools");
  return tools.map((tool: unknown, i: number) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) invalid(`${at} must be an object.`, at);
    if (tool.type !== "function") invalid(`${at}.type: only function tools are supported.`, `${at}.type`);
    return functionDefinition(tool.function, `${at}.function`);
  });
}

function legacyFunctionsToResponses(functions: unknown): JsonObject[] {
  if (functions == null) return [];
  if (!Array.isArray(functions)) invalid("`functions` must be an array.", "functions");
  return functions.map((fn: unknown, i: number) => functionDefinition(fn, `functions[${i}]`));
}

function functionDefinition(fn: unknown, at: string): JsonObject {
  if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "") invalid(`${at}.name is required.`, `${at}.name`);
  if (fn.parameters != null && !isObject(fn.parameters)) invalid(`${at}.parameters must be an object.`, `${at}.parameters`);
  if (fn.strict != null && typeof fn.strict !== "boolean") invalid(`${at}.strict must be a boolean.`, `${at}.strict`);
  // Chat treats a missing `strict` as false, Responses as true: say false explicitly, or loose schemas
  // silently switch to strict mode (optional fields filled in, schemas rejected).
  const out: JsonObject = { type: "function", name: fn.name, strict: fn.strict ?? false };
  if (typeof fn.description === "string") out.description = fn.description;
  if (fn.parameters != null) out.parameters = fn.parameters;
  return out;
}

function toolChoiceToResponses(choice: unknown): string | JsonObject | undefined {
  if (choice == null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (isObject(choice) && choice.type === "function") {
    const name = isObject(choice.function) ? choice.function.name : undefined;
    if (typeof name !== "string" || name === "") invalid("`tool_choice.function.name` is required.", "tool_choice.function.name");
    return { type: "function", name };
  }
  if (isObject(choice) && choice.type === "allowed_tools") return allowedToolsToResponses(choice.allowed_tools);
  invalid("`tool_choice` must be auto, none, required, or a function choice.", "tool_choice");
}

function allowedToolsToResponses(allowed: unknown): JsonObject {
  const at = "tool_choice.allowed_tools";
  if (!isObject(allowed) || (allowed.mode !== "auto" && allowed.mode !== "required") || !Array.isArray(allowed.tools)) {
    invalid(`\`${at}\` must have mode auto or required and a tools array.`, at);
  }
  const tools = allowed.tools.map((tool: unknown, i: number) => {
    const name = isObject(tool) && tool.type === "function" && isObject(tool.function) ? tool.function.name : undefined;
    if (typeof name !== "string" || name === "") invalid(`${at}.tools[${i}] must name a function.`, `${at}.tools[${i}]`);
    return { type: "function", name };
  });
  return { type: "allowed_tools", mode: allowed.mode, tools };
}

function legacyFunctionCallToResponses(choice: unknown): string | JsonObject | undefined {
  if (choice == null) return undefined;
  if (choice === "auto" || choice === "none") return choice;
  if (isObject(choice) && typeof choice.name === "string" && choice.name !== "") return { type: "function", name: choice.name };
  invalid("`function_call` must be auto, none, or {name}.", "function_call");
}

// ---- output format --------------------------------------------------------------------------------------

function textConfig(body: JsonObject): JsonObject | undefined {
  const text: JsonObject = {};
  const format = responseFormatToResponses(body.response_format);
  if (format !== undefined) text.format = format;
  if (body.verbosity != null) {
    if (typeof body.verbosity !== "string") invalid("`verbosity` must be a string.", "verbosity");
    text.verbosity = body.verbosity;
  }
  return Object.keys(text).length > 0 ? text : undefined;
}

function responseFormatToResponses(format: unknown): JsonObject | undefined {
  if (format == null) return undefined;
  if (!isObject(format)) invalid("`response_format` must be an object.", "response_format");
  switch (format.type) {
    case "text":
      return { type: "text" };
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      // Chat nests the schema under `json_schema`; Responses puts its fields beside `type`.
      const spec = format.json_schema;
      const at = "response_format.json_schema";
      if (!isObject(spec) || typeof spec.name !== "string" || spec.name === "") invalid(`\`${at}.name\` is required.`, `${at}.name`);
      if (spec.schema != null && !isObject(spec.schema)) invalid(`\`${at}.schema\` must be an object.`, `${at}.schema`);
      const out: JsonObject = { type: "json_schema", name: spec.name, schema: spec.schema ?? {}, strict: spec.strict === true };
      if (typeof spec.description === "string") out.description = spec.description;
      return out;
    }
    default:
      invalid("`response_format.type` must be text, json_object or json_schema.", "response_format.type");
  }
}

// ---- small validators -----------------------------------------------------------------------------------

function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value == null) return undefined;
  if (typeof value !== "boolean") invalid(`\`${param}\` must be a boolean.`, param);
  return value;
}

function positiveInteger(value: unknown, param: string): number | undefined {
  if (value == null) return undefined;
  if (!Number.isInteger(value) || (value as number) < 1) invalid(`\`${param}\` must be a positive integer.`, param);
  return value as number;
}
