/**
 * Responses stream events -> Anthropic Messages stream events, one upstream event at a time, as SSE frames
 * (`event: <type>` + `data: <json>`).
 *
 * The sequence is Anthropic's: message_start, then per block content_block_start / content_block_delta* /
 * content_block_stop (text, tool_use, thinking or redacted_thinking, one block open at a time, as Responses items come
 * one at a time), then message_delta (stop reason, usage) and message_stop. An upstream failure is an in-band `error`
 * event, after which nothing more is said. Stop sequences are cut here (stop-sequences.ts): after one, the rest of the
 * upstream's output is not passed on, and the reply may end at once (endAtStop) without waiting for the upstream's.
 */
import { mapStreamFailure } from "../../wire/failure";
import type { ResponseObject, ResponsesStreamEvent, ResponsesUsage } from "../../wire/responses-types";
import { streamErrorOf } from "../../wire/upstream-events";
import { appendText } from "../../wire/growing-text";
import { messagesErrorBody, messagesErrorOf } from "./messages-errors";
import type { MessagesErrorType, MessagesStopReason, MessagesUsage } from "./messages-types";
import { StopSequenceCutter } from "./stop-sequences";
import { signatureOf } from "./thinking-signature";

export interface MessagesStreamOptions {
  id: string;
  /** The model name the caller sent. */
  model: string;
  /** What message_start reports as input tokens, before the upstream's count arrives (message_delta carries it). */
  inputTokens: number;
  stopSequences: readonly string[];
  /** Whether reasoning goes out as thinking blocks (the caller asked for thinking). */
  thinking: boolean;
}

export interface MessagesStreamTranslator {
  push(ev: ResponsesStreamEvent): string;
  /** The upstream stream ended: an error event when it ended without its terminal event, else "". */
  finish(): string;
  /** A failure Gantry reports (the stream broke, the answer was withheld): an error event, unless the stream already ended. */
  fail(type: MessagesErrorType, message: string): string;
  /**
   * Once a stop sequence cut the reply, its end now rather than at the upstream's (message_delta with `usage`, what
   * was produced so far, and message_stop); "" before a stop, or once the stream ended.
   */
  endAtStop(usage: () => ResponsesUsage): string;
}

export function frame(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

type OpenBlock =
  /** A text block is started (content_block_start) only once it has text: one cut before its first character is no block. */
  | { kind: "text"; key: string; cutter: StopSequenceCutter; started: boolean }
  | { kind: "tool"; outputIndex: number }
  | { kind: "thinking"; outputIndex: number }
  | { kind: "redacted" };

interface ToolCall {
  sent: string;
  closed: boolean;
}

export function createMessagesStreamTranslator(opts: MessagesStreamOptions): MessagesStreamTranslator {
  let started = false;
  let ended = false;
  let emitted = false;
  let blocks = 0;
  let open: OpenBlock | null = null;
  let stopped: string | null = null;
  let sawToolUse = false;
  const textSent = new Map<string, string>();
  const calls = new Map<number, ToolCall>();
  const thinkingKeys = new Map<number, string>();

  function start(): string {
    if (started) return "";
    started = true;
    const usage: MessagesUsage = { input_tokens: opts.inputTokens, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    const message = { id: opts.id, type: "message", role: "assistant", model: opts.model, content: [], stop_reason: null, stop_sequence: null, usage };
    return frame("message_start", { type: "message_start", message });
  }

  function openBlock(block: OpenBlock, contentBlock: object): string {
    const out = start() + closeOpen();
    open = block;
    return out + blockStart(contentBlock);
  }

  function blockStart(contentBlock: object): string {
    emitted = true;
    return frame("content_block_start", { type: "content_block_start", index: blocks, content_block: contentBlock });
  }

  /** Text for the open text block, started with its first character. */
  function textDelta(block: Extract<OpenBlock, { kind: "text" }>, piece: string): string {
    if (piece === "") return "";
    let out = "";
    if (!block.started) {
      block.started = true;
      out += blockStart({ type: "text", text: "" });
    }
    return out + delta({ type: "text_delta", text: piece });
  }

  function delta(d: object): string {
    return frame("content_block_delta", { type: "content_block_delta", index: blocks, delta: d });
  }

  function closeOpen(signature = ""): string {
    const block = open;
    if (block === null) return "";
    let out = "";
    if (block.kind === "text") {
      out += textDelta(block, block.cutter.flush());
      if (!block.started) {
        open = null;
        return out;
      }
    } else if (block.kind === "thinking") {
      out += delta({ type: "signature_delta", signature });
    }
    open = null;
    out += frame("content_block_stop", { type: "content_block_stop", index: blocks });
    blocks++;
    return out;
  }

  /** Text of a message part: the part of `piece` not yet passed on (a delta, or a `.done` event's whole text). */
  function text(key: string, piece: string, isFull: boolean): string {
    if (stopped !== null) return "";
    const sent = textSent.get(key) ?? "";
    let rest = piece;
    if (isFull) {
      // A whole text that does not extend what the deltas said disagrees with them; the deltas already went out.
      if (!piece.startsWith(sent)) return "";
      rest = piece.slice(sent.length);
    }
    if (rest === "") return "";
    textSent.set(key, appendText(sent, rest));
    let out = "";
    let block = open;
    if (block?.kind !== "text" || block.key !== key) {
      out += start() + closeOpen();
      block = { kind: "text", key, cutter: new StopSequenceCutter(opts.stopSequences), started: false };
      open = block;
    }
    const cut = block.cutter.push(rest);
    out += textDelta(block, cut.text);
    if (cut.stopped !== null) {
      stopped = cut.stopped;
      out += closeOpen();
    }
    return out;
  }

  function startTool(outputIndex: number, item: Record<string, any>): string {
    if (stopped !== null || calls.has(outputIndex)) return "";
    calls.set(outputIndex, { sent: "", closed: false });
    sawToolUse = true;
    const id = typeof item.call_id === "string" ? item.call_id : typeof item.id === "string" ? item.id : `toolu_${outputIndex}`;
    const name = typeof item.name === "string" ? item.name : "";
    return openBlock({ kind: "tool", outputIndex }, { type: "tool_use", id, name, input: {} }) + args(outputIndex, item.arguments, true);
  }

  function args(outputIndex: number, piece: unknown, isFull: boolean): string {
    const call = calls.get(outputIndex);
    if (!call || call.closed || typeof piece !== "string" || open?.kind !== "tool" || open.outputIndex !== outputIndex) return "";
    let rest = piece;
    if (isFull) {
      if (!piece.startsWith(call.sent)) return "";
      rest = piece.slice(call.sent.length);
    }
    if (rest === "") return "";
    call.sent = appendText(call.sent, rest);
    return delta({ type: "input_json_delta", partial_json: rest });
  }

  function thinkingDelta(outputIndex: number, key: string, piece: unknown): string {
    if (!opts.thinking || stopped !== null || typeof piece !== "string" || piece === "") return "";
    let out = "";
    let sep = "";
    if (open?.kind !== "thinking" || open.outputIndex !== outputIndex) {
      out += openBlock({ kind: "thinking", outputIndex }, { type: "thinking", thinking: "", signature: "" });
    } else if (thinkingKeys.get(outputIndex) !== key) sep = "\n\n";
    thinkingKeys.set(outputIndex, key);
    return out + delta({ type: "thinking_delta", thinking: sep + piece });
  }

  function reasoningDone(outputIndex: number, item: Record<string, any>): string {
    if (!opts.thinking || stopped !== null) return "";
    const encrypted = typeof item.encrypted_content === "string" && item.encrypted_content !== "" ? item.encrypted_content : null;
    if (open?.kind === "thinking" && open.outputIndex === outputIndex) return closeOpen(encrypted ? signatureOf(encrypted) : "");
    // Summary text that came only with the item (nothing streamed): one thinking block with all of it.
    const summary = Array.isArray(item.summary) ? item.summary.map((p: any) => (typeof p?.text === "string" ? p.text : "")).filter((t: string) => t !== "") : [];
    if (summary.length > 0) return thinkingDelta(outputIndex, "done", summary.join("\n\n")) + closeOpen(encrypted ? signatureOf(encrypted) : "");
    // Reasoning with nothing to show still has to come back next turn: a redacted block carries it.
    if (encrypted === null) return "";
    return openBlock({ kind: "redacted" }, { type: "redacted_thinking", data: signatureOf(encrypted) }) + closeOpen();
  }

  function itemDone(outputIndex: number, item: Record<string, any> | undefined): string {
    if (!item || typeof item !== "object") return "";
    if (item.type === "function_call") {
      let out = startTool(outputIndex, item) + args(outputIndex, item.arguments, true);
      const call = calls.get(outputIndex);
      if (call && !call.closed && open?.kind === "tool" && open.outputIndex === outputIndex) {
        call.closed = true;
        out += closeOpen();
      }
      return out;
    }
    if (item.type === "message" && Array.isArray(item.content)) {
      let out = "";
      item.content.forEach((part: Record<string, any>, j: number) => {
        if (part?.type === "output_text" && typeof part.text === "string") out += text(`${outputIndex}:${j}`, part.text, true);
        else if (part?.type === "refusal" && typeof part.refusal === "string") out += text(`${outputIndex}:${j}`, part.refusal, true);
      });
      if (open?.kind === "text" && open.key.startsWith(`${outputIndex}:`)) out += closeOpen();
      return out;
    }
    if (item.type === "reasoning") return reasoningDone(outputIndex, item);
    return "";
  }

  function close(status: "completed" | "incomplete", response: ResponseObject | undefined): string {
    let out = start();
    // Nothing streamed: the terminal output is the whole reply.
    if (!emitted && Array.isArray(response?.output)) response.output.forEach((item, i) => (out += itemDone(i, item as Record<string, any>)));
    out += closeOpen();
    return out + finale(stopReasonOf(status, response?.incomplete_details?.reason, stopped, sawToolUse), response?.usage);
  }

  function finale(stopReason: MessagesStopReason, usage: ResponsesUsage | null | undefined): string {
    ended = true;
    const delta = { stop_reason: stopReason, stop_sequence: stopped };
    return frame("message_delta", { type: "message_delta", delta, usage: usageToMessages(usage) }) + frame("message_stop", { type: "message_stop" });
  }

  function errorEvent(type: MessagesErrorType, message: string): string {
    ended = true;
    return frame("error", messagesErrorBody(type, message));
  }

  function push(ev: ResponsesStreamEvent): string {
    if (ended || !ev || typeof ev.type !== "string") return "";
    const oi = typeof ev.output_index === "number" ? ev.output_index : -1;
    const ci = typeof ev.content_index === "number" ? ev.content_index : 0;
    const si = typeof ev.summary_index === "number" ? ev.summary_index : 0;
    switch (ev.type) {
      case "response.created":
      case "response.in_progress":
        return start();
      case "response.output_text.delta":
      case "response.refusal.delta":
        return typeof ev.delta === "string" ? text(`${oi}:${ci}`, ev.delta, false) : "";
      case "response.output_text.done":
        return typeof ev.text === "string" ? text(`${oi}:${ci}`, ev.text, true) : "";
      case "response.refusal.done":
        return typeof ev.refusal === "string" ? text(`${oi}:${ci}`, ev.refusal, true) : "";
      case "response.output_item.added":
        return ev.item?.type === "function_call" ? startTool(oi, ev.item) : "";
      case "response.function_call_arguments.delta":
        return args(oi, ev.delta, false);
      case "response.function_call_arguments.done":
        return args(oi, ev.arguments, true);
      case "response.output_item.done":
        return itemDone(oi, ev.item);
      case "response.reasoning_summary_text.delta":
        return thinkingDelta(oi, `summary:${si}`, ev.delta);
      case "response.reasoning_text.delta":
        return thinkingDelta(oi, `text:${ci}`, ev.delta);
      case "response.completed":
        return close("completed", ev.response);
      case "response.incomplete":
        return close("incomplete", ev.response);
      case "response.failed":
      case "error": {
        const err = streamErrorOf(ev)!;
        return start() + errorEvent(upstreamErrorType(err.code, err.message), err.message);
      }
      default:
        return "";
    }
  }

  return {
    push,
    finish: () => (ended ? "" : start() + errorEvent("api_error", "The upstream stream ended before the response was complete.")),
    fail: (type, message) => (ended ? "" : start() + errorEvent(type, message)),
    // The block the sequence ended was closed when it was found.
    endAtStop: (usage) => (ended || stopped === null ? "" : finale("stop_sequence", usage())),
  };
}

/** The type of an upstream failure told in-band: an overload is said as Anthropic says it, the rest as the table maps it. */
export function upstreamErrorType(code: string, message: string): MessagesErrorType {
  if (/overload|unavailable|slow_down/i.test(code)) return "overloaded_error";
  return messagesErrorOf(mapStreamFailure(code, message)).type;
}

/**
 * Why the reply stopped. A stop sequence first (it cut the reply); then a truncation (a call cut off by the token limit
 * has unfinished arguments, and tool_use would invite the client to run it); then tool use.
 */
export function stopReasonOf(status: string, incompleteReason: unknown, stopSequence: string | null, sawToolUse: boolean): MessagesStopReason {
  if (stopSequence !== null) return "stop_sequence";
  if (status === "incomplete") {
    if (incompleteReason === "content_filter") return "refusal";
    return "max_tokens";
  }
  return sawToolUse ? "tool_use" : "end_turn";
}

/**
 * Responses usage in Anthropic's fields. Anthropic counts cached input apart (input_tokens + cache_read_input_tokens
 * is the whole input); Responses counts it inside input_tokens.
 */
export function usageToMessages(u: ResponsesUsage | null | undefined): MessagesUsage {
  const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  const input = count(u?.input_tokens);
  const cached = Math.min(input, count(u?.input_tokens_details?.cached_tokens));
  return { input_tokens: input - cached, output_tokens: count(u?.output_tokens), cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}
