/**
 * Pure builders of Responses API stream events, in the wire shapes of real OpenAI captures (research notes §1).
 * Both the demo's simulated upstream and the test fake upstream speak through these, so the gateway is always
 * exercised against the same protocol the real upstream sends — including its awkward parts (empty terminal
 * output, nested error events, reasoning items occupying output indexes).
 */

import type {
  FunctionCallItem,
  MessageItem,
  OutputItem,
  ReasoningItem,
  ResponseObject,
  ResponsesRequest,
  ResponsesStreamEvent,
  ResponsesUsage,
} from "../wire/responses-types";

export interface SimulatedCall {
  name: string;
  arguments: string;
  callId?: string;
  /** Split the arguments into this many deltas; default: chunks of ~10 characters. */
  deltas?: number;
}

export interface ResponseEventSpec {
  /** `resp_…`; when given, every item id and call id is derived from it so the whole stream is reproducible. */
  id?: string;
  model: string;
  /** Unix seconds, as in `created_at`. */
  createdAt: number;
  /** Assistant text. Omit it (with no calls and no reasoning) for a response with no output items at all. */
  text?: string;
  /** Split the text into N deltas; default: one delta per word, like token-sized chunks. */
  deltas?: number;
  calls?: SimulatedCall[];
  /** Reasoning summary text; "" gives a reasoning item with an empty summary (what most captures show). */
  reasoning?: string;
  /** Set on the reasoning item at output_item.done, as the upstream does for include:["reasoning.encrypted_content"]. */
  encryptedReasoning?: string;
  /** Overrides of the computed usage; null sends `usage: null` on the terminal event. */
  usage?: Partial<ResponsesUsage> | null;
  /** "none" ends after the last item, as a stream cut short by the upstream would. */
  terminal?: "completed" | "incomplete" | "failed" | "none";
  /** For terminal "incomplete"; default "max_output_tokens". */
  incompleteReason?: string;
  /** For terminal "failed". */
  error?: { code: string; message: string };
  /** Emit an `error` event just before the terminal one, in the flat (SDK-typed) or nested (captured) form. */
  errorEvent?: "flat" | "nested" | "string";
  /** The upstream sometimes sends `response.completed` with `output: []`; clients must rebuild it from the items. */
  emptyTerminalOutput?: boolean;
  /** The request whose fields the response object echoes (instructions, tools, tool_choice, …). */
  request?: Partial<ResponsesRequest>;
}

/** The upstream bills about four characters per token; close enough for quotas and demos. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

/** Split on code points so a delta never carries half a surrogate pair. */
export function splitIntoDeltas(text: string, n?: number): string[] {
  if (text.length === 0) return [];
  if (n === undefined) {
    const words = text.match(/\s*\S+/g) ?? [];
    const rest = text.slice(words.join("").length);
    return rest ? [...words, rest] : words;
  }
  const chars = Array.from(text);
  const count = Math.max(1, Math.min(Math.floor(n), chars.length));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(chars.slice(Math.floor((i * chars.length) / count), Math.floor(((i + 1) * chars.length) / count)).join(""));
  }
  return out;
}

function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Builds the full event sequence of one streamed response, sequence numbers from 0. */
export function buildResponseEvents(spec: ResponseEventSpec): ResponsesStreamEvent[] {
  const id = spec.id ?? `resp_${randomHex(24)}`;
  const base = id.startsWith("resp_") ? id.slice(5) : id;
  const terminal = spec.terminal ?? "completed";
  const calls = spec.calls ?? [];
  const events: ResponsesStreamEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => {
    events.push({ type, sequence_number: events.length, ...fields });
  };

  const response = (status: string, output: OutputItem[], usage: ResponsesUsage | null): ResponseObject =>
    responseObject(spec, id, status, output, usage);

  emit("response.created", { response: response("in_progress", [], null) });
  emit("response.in_progress", { response: response("in_progress", [], null) });

  const output: OutputItem[] = [];

  if (spec.reasoning !== undefined) {
    const itemId = `rs_${base}`;
    const outputIndex = output.length;
    emit("response.output_item.added", { output_index: outputIndex, item: { id: itemId, type: "reasoning", summary: [] } });
    const summary: ReasoningItem["summary"] = [];
    if (spec.reasoning.length > 0) {
      const at = { item_id: itemId, output_index: outputIndex, summary_index: 0 };
      emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
      for (const delta of splitIntoDeltas(spec.reasoning)) emit("response.reasoning_summary_text.delta", { ...at, delta });
      emit("response.reasoning_summary_text.done", { ...at, text: spec.reasoning });
      emit("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text: spec.reasoning } });
      summary.push({ type: "summary_text", text: spec.reasoning });
    }
    const item: ReasoningItem = { id: itemId, type: "reasoning", summary };
    if (spec.encryptedReasoning !== undefined) item.encrypted_content = spec.encryptedReasoning;
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
  }

  if (spec.text !== undefined) {
    const itemId = `msg_${base}`;
    const outputIndex = output.length;
    // A response cut by max_output_tokens (or a failure) leaves its message item incomplete, not completed.
    const doneStatus = terminal === "completed" || terminal === "none" ? "completed" : "incomplete";
    emit("response.output_item.added", {
      output_index: outputIndex,
      item: { id: itemId, type: "message", status: "in_progress", content: [], role: "assistant" },
    });
    const at = { item_id: itemId, output_index: outputIndex, content_index: 0 };
    emit("response.content_part.added", { ...at, part: { type: "output_text", annotations: [], text: "" } });
    // With include message.output_text.logprobs, one entry per delta (a delta stands for a token here).
    const wantLogprobs = Array.isArray(spec.request?.include) && spec.request.include.includes("message.output_text.logprobs");
    const topN = typeof spec.request?.top_logprobs === "number" ? spec.request.top_logprobs : 0;
    const all: unknown[] = [];
    const logprobsOf = (token: string) => {
      if (!wantLogprobs) return [];
      const bytes = [...new TextEncoder().encode(token)];
      const alternatives = Array.from({ length: topN }, (_, i) => ({ token: i === 0 ? token : `${token}~${i}`, logprob: -0.01 * (i + 1), bytes: i === 0 ? bytes : [...new TextEncoder().encode(`${token}~${i}`)] }));
      const entry = { token, logprob: -0.01, bytes, top_logprobs: alternatives };
      all.push(entry);
      return [entry];
    };
    for (const delta of splitIntoDeltas(spec.text, spec.deltas)) emit("response.output_text.delta", { ...at, delta, logprobs: logprobsOf(delta) });
    emit("response.output_text.done", { ...at, text: spec.text, logprobs: all });
    const part = { type: "output_text" as const, annotations: [], text: spec.text, ...(wantLogprobs ? { logprobs: all } : {}) };
    emit("response.content_part.done", { ...at, part });
    const item: MessageItem = { id: itemId, type: "message", status: doneStatus, content: [part], role: "assistant" };
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
  }

  calls.forEach((call, i) => {
    const itemId = `fc_${base}_${i}`;
    const callId = call.callId ?? `call_${base.slice(0, 16)}_${i}`;
    const outputIndex = output.length;
    emit("response.output_item.added", {
      output_index: outputIndex,
      item: { id: itemId, type: "function_call", status: "in_progress", arguments: "", call_id: callId, name: call.name },
    });
    const argDeltas = call.deltas ?? Math.ceil(Array.from(call.arguments).length / 10);
    for (const delta of splitIntoDeltas(call.arguments, argDeltas)) {
      emit("response.function_call_arguments.delta", { item_id: itemId, output_index: outputIndex, delta });
    }
    emit("response.function_call_arguments.done", { item_id: itemId, output_index: outputIndex, arguments: call.arguments });
    const item: FunctionCallItem = {
      id: itemId,
      type: "function_call",
      status: "completed",
      arguments: call.arguments,
      call_id: callId,
      name: call.name,
    };
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
  });

  const error = spec.error ?? { code: "server_error", message: "An error occurred while processing your request." };
  if (spec.errorEvent === "flat") emit("error", { code: error.code, message: error.message, param: null });
  if (spec.errorEvent === "nested") emit("error", { error: { code: error.code, message: error.message, param: null } });
  // Seen from some proxies: the error is just its message.
  if (spec.errorEvent === "string") emit("error", { error: error.message });

  if (terminal === "none") return events;

  const usage = spec.usage === null ? null : computeUsage(spec);
  const final = response(terminal, spec.emptyTerminalOutput ? [] : output, usage);
  if (terminal === "incomplete") final.incomplete_details = { reason: spec.incompleteReason ?? "max_output_tokens" };
  if (terminal === "failed") final.error = error;
  emit(`response.${terminal}`, { response: final });
  return events;
}

function computeUsage(spec: ResponseEventSpec): ResponsesUsage {
  const given = spec.usage ?? {};
  const reasoningTokens = given.output_tokens_details?.reasoning_tokens ?? estimateTokens(spec.reasoning ?? "");
  const visible = estimateTokens(spec.text ?? "") + (spec.calls ?? []).reduce((n, c) => n + estimateTokens(c.arguments), 0);
  // output_tokens includes reasoning tokens, as the upstream reports it.
  const outputTokens = given.output_tokens ?? visible + reasoningTokens;
  const inputTokens = given.input_tokens ?? 0;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: given.input_tokens_details?.cached_tokens ?? 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: given.total_tokens ?? inputTokens + outputTokens,
  };
}

/** Field order and echo defaults follow the captured OpenAI response objects. */
function responseObject(
  spec: ResponseEventSpec,
  id: string,
  status: string,
  output: OutputItem[],
  usage: ResponsesUsage | null,
): ResponseObject {
  const req = spec.request ?? {};
  return {
    id,
    object: "response",
    created_at: spec.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: spec.model,
    output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    service_tier: "auto",
    store: (req.store as boolean | undefined) ?? false,
    temperature: 1.0,
    text: (req.text as unknown) ?? { format: { type: "text" } },
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    top_p: 1.0,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  };
}

export interface EncodeOptions {
  /** Frame with \r\n instead of \n (seen behind some proxies). */
  crlf?: boolean;
  /** Interleave `: keep-alive` comment frames, which parsers must skip. */
  withComments?: boolean;
  /** Interleave frames with an `event:` line and no `data:` line, as codex's own test harness emits. */
  bareEventFrames?: boolean;
  /** Append `data: [DONE]`; the real upstream never sends it, some gateways do. */
  done?: boolean;
}

/** One string per event, with any interleaved noise attached to the frame it precedes. */
export function encodeEventFrames(events: ResponsesStreamEvent[], opts: EncodeOptions = {}): string[] {
  const nl = opts.crlf ? "\r\n" : "\n";
  const frames = events.map((event, i) => {
    let noise = "";
    if (opts.withComments && i % 4 === 0) noise += `: keep-alive${nl}${nl}`;
    if (opts.bareEventFrames && i % 4 === 2) noise += `event: response.heartbeat${nl}${nl}`;
    return `${noise}event: ${event.type}${nl}data: ${JSON.stringify(event)}${nl}${nl}`;
  });
  if (opts.done) frames.push(`data: [DONE]${nl}${nl}`);
  return frames;
}

export function encodeEventStream(events: ResponsesStreamEvent[], opts: EncodeOptions = {}): string {
  return encodeEventFrames(events, opts).join("");
}
