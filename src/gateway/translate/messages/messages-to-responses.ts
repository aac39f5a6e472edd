/**
 * Anthropic Messages request -> Responses request (pure). `messagesToResponses(body)` is the one translation: the
 * messages route sends its result upstream, count_tokens counts it.
 *
 * Every field has one fate: mapped (system, messages, tools, tool_choice, max_tokens, temperature, top_p, thinking,
 * output_config, metadata.user_id), kept for Gantry to honour (stream, stop_sequences), dropped because the upstream
 * has no equivalent (top_k), or ignored (cache_control, context_management, service_tier, container, mcp_servers and
 * any field this file does not know: a client's newer field must not turn into a refusal). docs/contract.md lists them.
 */
import { createHash } from "node:crypto";
import type { JsonObject, ResponsesRequest } from "../../wire/responses-types";
import { invalid, isObject } from "../request-checks";
import { messagesToInput } from "./messages-input";

export interface MessagesTranslation {
  request: ResponsesRequest;
  stream: boolean;
  /** `max_tokens` as the caller sent it (admission bounds it by the key's limit); null when absent. */
  maxTokens: number | null;
  /** Cut by Gantry: the reply ends at the first of them, with stop_reason "stop_sequence". */
  stopSequences: string[];
  /** The caller asked for thinking: reasoning comes back as thinking blocks (otherwise it is left out). */
  thinking: boolean;
}

/** The upstream's limit on `user`; a longer id (Claude Code's is a JSON document) is replaced by its SHA-256. */
export const MAX_USER_CHARS = 64;
const MAX_STOP_SEQUENCES = 16;

export function messagesToResponses(body: unknown): MessagesTranslation {
  if (!isObject(body)) invalid("The request body must be a JSON object.", null);
  const model = body.model;
  if (typeof model !== "string" || model === "") invalid("model: must be a non-empty string.", "model");
  const stream = optionalBoolean(body.stream, "stream") ?? false;

  const { instructions, input } = messagesToInput(body.system, body.messages);
  const request: ResponsesRequest = { model, input, stream: true };
  if (instructions !== undefined) request.instructions = instructions;

  const maxTokens = positiveInteger(body.max_tokens, "max_tokens");
  if (maxTokens !== undefined) request.max_output_tokens = maxTokens;
  for (const field of ["temperature", "top_p"] as const) {
    const v = body[field];
    if (v == null) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) invalid(`${field}: must be a non-negative number.`, field);
    request[field] = v;
  }
  if (body.top_k != null && (!Number.isInteger(body.top_k) || body.top_k < 0)) invalid("top_k: must be a non-negative integer.", "top_k");

  const tools = toolsToResponses(body.tools);
  if (tools.length > 0) request.tools = tools;
  const choice = toolChoiceToResponses(body.tool_choice);
  if (choice.choice !== undefined) request.tool_choice = choice.choice;
  if (choice.parallel !== undefined) request.parallel_tool_calls = choice.parallel;

  const thinking = thinkingOf(body.thinking);
  const outputConfig = outputConfigOf(body.output_config);
  const effort = outputConfig.effort ?? thinking.effort;
  if (effort !== undefined || thinking.on) {
    // A summary is what comes back as thinking text; without thinking asked for, none is wanted.
    request.reasoning = { ...(effort !== undefined ? { effort } : {}), ...(thinking.on ? { summary: "auto" } : {}) };
  }
  if (outputConfig.format !== undefined) request.text = { format: outputConfig.format };

  const user = userOf(body.metadata);
  if (user !== undefined) request.user = user;

  return { request, stream, maxTokens: maxTokens ?? null, stopSequences: stopSequencesOf(body.stop_sequences), thinking: thinking.on };
}

function toolsToResponses(tools: unknown): JsonObject[] {
  if (tools == null) return [];
  if (!Array.isArray(tools)) invalid("tools: must be an array.", "tools");
  return tools.map((tool: unknown, i: number) => {
    const at = `tools.${i}`;
    if (!isObject(tool)) invalid(`${at}: must be an object.`, at);
    // Anthropic's server tools (web search, code execution, …) run on Anthropic's side; the upstream has none of them.
    if (tool.type != null && tool.type !== "custom") invalid(`${at}.type: "${String(tool.type).slice(0, 64)}" is a server tool; only custom tools are supported.`, `${at}.type`);
    if (typeof tool.name !== "string" || tool.name === "") invalid(`${at}.name: must be a non-empty string.`, `${at}.name`);
    if (!isObject(tool.input_schema)) invalid(`${at}.input_schema: must be a JSON schema object.`, `${at}.input_schema`);
    // Anthropic schemas are not strict; Responses assumes strict unless told, which would refuse most of them.
    const out: JsonObject = { type: "function", name: tool.name, parameters: tool.input_schema, strict: false };
    if (typeof tool.description === "string") out.description = tool.description;
    return out;
  });
}

function toolChoiceToResponses(choice: unknown): { choice?: string | JsonObject; parallel?: boolean } {
  if (choice == null) return {};
  if (!isObject(choice)) invalid("tool_choice: must be an object.", "tool_choice");
  const parallel = optionalBoolean(choice.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use");
  const out: { choice?: string | JsonObject; parallel?: boolean } = parallel === undefined ? {} : { parallel: !parallel };
  switch (choice.type) {
    case "auto":
      return { ...out, choice: "auto" };
    case "any":
      return { ...out, choice: "required" };
    case "none":
      return { choice: "none" };
    case "tool":
      if (typeof choice.name !== "string" || choice.name === "") invalid("tool_choice.name: must be a non-empty string.", "tool_choice.name");
      return { ...out, choice: { type: "function", name: choice.name } };
    default:
      invalid("tool_choice.type: must be auto, any, tool or none.", "tool_choice.type");
  }
}

/** `thinking`: enabled (with a budget), adaptive, or disabled. A budget is read as an effort (LiteLLM's thresholds). */
function thinkingOf(thinking: unknown): { on: boolean; effort?: string } {
  if (thinking == null) return { on: false };
  if (!isObject(thinking)) invalid("thinking: must be an object.", "thinking");
  switch (thinking.type) {
    case "disabled":
      return { on: false };
    case "adaptive":
      return { on: true };
    case "enabled": {
      const budget = thinking.budget_tokens;
      if (!Number.isInteger(budget) || budget < 1) invalid("thinking.budget_tokens: must be a positive integer.", "thinking.budget_tokens");
      return { on: true, effort: budget >= 10000 ? "high" : budget >= 5000 ? "medium" : "low" };
    }
    default:
      invalid("thinking.type: must be enabled, adaptive or disabled.", "thinking.type");
  }
}

const EFFORTS: Readonly<Record<string, string>> = { low: "low", medium: "medium", high: "high", max: "high" };

function outputConfigOf(config: unknown): { effort?: string; format?: JsonObject } {
  if (config == null) return {};
  if (!isObject(config)) invalid("output_config: must be an object.", "output_config");
  const out: { effort?: string; format?: JsonObject } = {};
  if (config.effort != null) {
    if (typeof config.effort !== "string" || !(config.effort in EFFORTS)) invalid("output_config.effort: must be low, medium, high or max.", "output_config.effort");
    out.effort = EFFORTS[config.effort];
  }
  const format = config.format;
  if (format != null) {
    if (!isObject(format) || format.type !== "json_schema" || !isObject(format.schema)) {
      invalid("output_config.format: must be {type: \"json_schema\", schema: {...}}.", "output_config.format");
    }
    out.format = { type: "json_schema", name: "output", schema: format.schema, strict: false };
  }
  return out;
}

function userOf(metadata: unknown): string | undefined {
  if (metadata == null) return undefined;
  if (!isObject(metadata)) invalid("metadata: must be an object.", "metadata");
  const id = metadata.user_id;
  if (id == null) return undefined;
  if (typeof id !== "string") invalid("metadata.user_id: must be a string.", "metadata.user_id");
  if (id === "") return undefined;
  return id.length <= MAX_USER_CHARS ? id : createHash("sha256").update(id).digest("hex");
}

function stopSequencesOf(value: unknown): string[] {
  if (value == null) return [];
  if (!Array.isArray(value) || value.some((s) => typeof s !== "string")) invalid("stop_sequences: must be an array of strings.", "stop_sequences");
  if (value.length > MAX_STOP_SEQUENCES) invalid(`stop_sequences: at most ${MAX_STOP_SEQUENCES} are accepted.`, "stop_sequences");
  return [...new Set(value.filter((s: string) => s !== ""))];
}

function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value == null) return undefined;
  if (typeof value !== "boolean") invalid(`${param}: must be a boolean.`, param);
  return value;
}

function positiveInteger(value: unknown, param: string): number | undefined {
  if (value == null) return undefined;
  if (!Number.isInteger(value) || (value as number) < 1) invalid(`${param}: must be a positive integer.`, param);
  return value as number;
}
