/**
 * Responses stream events -> `chat.completion.chunk` objects, one event at a time.
 *
 * The route encodes every returned object as a `data:` line and writes `[DONE]` after the stream ends.
 * The closing chunks (finish_reason, then usage) are returned by the push of the terminal event, so
 * finish() only has something to say when the upstream ended without one: then it returns an error frame,
 * because a truncated reply reported as a clean `stop` is indistinguishable from a complete one.
 */

import { chatLogprobs } from "./logprobs";
import { streamErrorOf } from "../wire/upstream-events";
import type { ResponsesStreamEvent } from "../wire/responses-types";
import type { ChatChunkDelta, ChatCompletionChunk, ChatFinishReason, ChatStreamError } from "./chat-types";
import { mapStreamFailure } from "../wire/failure";
import { finishReason, usageToChat } from "./responses-to-chat";
import { encodeDataAll } from "../wire/sse-encode";
import type { TextDeltaFields } from "../wire/delta-text";
import { appendText } from "../wire/growing-text";


export interface ChatStreamTranslatorOptions {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
}

export interface ChatStreamTranslator {
  push(ev: ResponsesStreamEvent): object[];
  /**
   * The frames of an event, encoded as `data:` lines: exactly what encoding push()'s chunks gives. A text delta
   * (most of a stream) is framed from a template instead of a chunk object serialised whole.
   */
  pushEncoded(ev: ResponsesStreamEvent): string;
  /** pushEncoded for a text delta read from its JSON text (delta-text.ts), without the parsed event. */
  pushTextDelta(fields: TextDeltaFields): string;
  /**
   * For an event whose fields the translator does not read (the response's and a part's opening events): its frames
   * from its type alone, or null when the type is not one of those (the caller then parses it and pushes it).
   */
  pushOpening(type: string): string | null;
  finish(): object[];
  fail(err: { message: string; type: string; code: string }): object[];
}

type Chunk = ChatCompletionChunk | ChatStreamError;

interface CallState {
  index: number;
  /** Argument text already sent, so `.done` events can send only what the deltas missed. */
  sent: string;
}

export function createChatStreamTranslator(opts: ChatStreamTranslatorOptions): ChatStreamTranslator {
  let opened = false;
  let ended = false;
  let emittedOutput = false;
  // Chat tool-call indexes count function calls in order of appearance; output_index cannot be used
  // directly because reasoning and message items occupy output slots too.
  const calls = new Map<number, CallState>();
  const textSent = new Map<string, string>();
  let lastReasoningKey: string | null = null;

  function chunk(delta: ChatChunkDelta, finish: ChatFinishReason | null = null): ChatCompletionChunk {
    const c: ChatCompletionChunk = {
      id: opts.id,
      object: "chat.completion.chunk",
      created: opts.created,
      model: opts.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (opts.includeUsage) c.usage = null;
    return c;
  }

  function open(): Chunk[] {
    if (opened) return [];
    opened = true;
    return [chunk({ role: "assistant", content: "" })];
  }

  function withOpen(chunks: Chunk[]): Chunk[] {
    if (chunks.length === 0) return chunks;
    emittedOutput = true;
    return [...open(), ...chunks];
  }

  /** Sends the part of `full` not yet sent under `key`; used by deltas (append) and `.done` events. */
  function textUpTo(key: string, piece: string, kind: "content" | "refusal", isFull: boolean): Chunk[] {
    const sent = textSent.get(key) ?? "";
    let rest: string;
    if (isFull) {
      // A full text that does not extend what was sent disagrees with the deltas; the deltas already
      // reached the client, so the text is not re-sent.
      if (!piece.startsWith(sent)) return [];
      rest = piece.slice(sent.length);
    } else {
      rest = piece;
    }
    if (rest === "") return [];
    textSent.set(key, appendText(sent, rest));
    return withOpen([chunk(kind === "content" ? { content: rest } : { refusal: rest })]);
  }

  function startCall(outputIndex: number, item: Record<string, any>): Chunk[] {
    if (calls.has(outputIndex)) return [];
    const state: CallState = { index: calls.size, sent: "" };
    calls.set(outputIndex, state);
    const header = chunk({
      tool_calls: [{ index: state.index, id: item.call_id ?? item.id, type: "function", function: { name: item.name, arguments: "" } }],
    });
    // The header is opened first: argsUpTo opens the turn itself, which would put the role chunk after the header.
    return [...withOpen([header]), ...argsUpTo(outputIndex, item.arguments, true)];
  }

  function argsUpTo(outputIndex: number, piece: unknown, isFull: boolean): Chunk[] {
    const state = calls.get(outputIndex);
    // Argument events for a call whose header was never seen are skipped; output_item.done carries the
    // whole call and sends it then.
    if (!state || typeof piece !== "string") return [];
    let rest: string;
    if (isFull) {
      if (!piece.startsWith(state.sent)) return [];
      rest = piece.slice(state.sent.length);
    } else {
      rest = piece;
    }
    if (rest === "") return [];
    state.sent = appendText(state.sent, rest);
    return withOpen([chunk({ tool_calls: [{ index: state.index, function: { arguments: rest } }] })]);
  }

  /** An argument-less call streams no argument text; "{}" keeps the client's JSON.parse working. */
  function closeEmptyCall(outputIndex: number): Chunk[] {
    const state = calls.get(outputIndex);
    if (!state || state.sent.trim() !== "") return [];
    return argsUpTo(outputIndex, "{}", false);
  }

  function reasoning(key: string, delta: unknown): Chunk[] {
    if (typeof delta !== "string" || delta === "") return [];
    // Separate summary parts the way the non-streaming reply joins them.
    const sep = lastReasoningKey !== null && lastReasoningKey !== key ? "\n\n" : "";
    lastReasoningKey = key;
    return withOpen([chunk({ reasoning_content: sep + delta })]);
  }

  function itemDone(outputIndex: number, item: Record<string, any>): Chunk[] {
    if (item?.type === "function_call") {
      return [...startCall(outputIndex, item), ...argsUpTo(outputIndex, item.arguments, true), ...closeEmptyCall(outputIndex)];
    }
    if (item?.type === "message" && Array.isArray(item.content)) {
      return item.content.flatMap((part: Record<string, any>, j: number) => {
        if (part?.type === "output_text" && typeof part.text === "string") {
          return textUpTo(`${outputIndex}:${j}:content`, part.text, "content", true);
        }
        if (part?.type === "refusal" && typeof part.refusal === "string") {
          return textUpTo(`${outputIndex}:${j}:refusal`, part.refusal, "refusal", true);
        }
        return [];
      });
    }
    return [];
  }

  function close(status: "completed" | "incomplete", response: Record<string, any> | undefined): Chunk[] {
    const out: Chunk[] = [];
    // Only when nothing was streamed: the terminal output then is the whole reply. Otherwise the stream is
    // trusted, since the terminal `output` can be empty or indexed differently from the events.
    if (!emittedOutput && Array.isArray(response?.output)) {
      response.output.forEach((item: Record<string, any>, i: number) => out.push(...itemDone(i, item)));
    }
    for (const outputIndex of calls.keys()) out.push(...closeEmptyCall(outputIndex));
    out.push(...open());
    // The event type, not the embedded status, says how the response ended.
    const ending = { status, incomplete_details: response?.incomplete_details ?? null };
    out.push(chunk({}, finishReason(ending, calls.size > 0)));
    const usage = usageToChat(response?.usage);
    if (opts.includeUsage && usage) {
      out.push({ id: opts.id, object: "chat.completion.chunk", created: opts.created, model: opts.model, choices: [], usage });
    }
    ended = true;
    return out;
  }

  function errorFrame(message: string, type: string, code: string, param: string | null): Chunk[] {
    ended = true;
    return [{ error: { message, type, code, param } }];
  }

  /** The chat error chunk of an upstream error event: read as the ledger reads it (upstream-events.ts). */
  function upstreamError(ev: ResponsesStreamEvent): Chunk[] {
    const err = streamErrorOf(ev)!;
    // Without a type of its own, the error gets the type a non-streaming caller would see for the same code.
    return errorFrame(err.message, err.type ?? mapStreamFailure(err.code, err.message).type, err.code, err.param);
  }

  function push(ev: ResponsesStreamEvent): object[] {
    if (ended || !ev || typeof ev.type !== "string") return [];
    const oi: number = typeof ev.output_index === "number" ? ev.output_index : -1;
    // Only numbers and strings are read from the payload: String() or a template literal on an arbitrary JSON
    // object (e.g. {"toString": 0}) throws. The collector reads these fields the same way.
    const ci: number = typeof ev.content_index === "number" ? ev.content_index : 0;
    const si: number = typeof ev.summary_index === "number" ? ev.summary_index : 0;
    const delta = typeof ev.delta === "string" ? ev.delta : "";
    switch (ev.type) {
      case "response.created":
      case "response.in_progress":
        return open();
      case "response.output_text.delta": {
        const chunks = textUpTo(`${oi}:${ci}:content`, delta, "content", false);
        const lp = Array.isArray(ev.logprobs) && ev.logprobs.length > 0 ? chatLogprobs(ev.logprobs) : null;
        const last = chunks.at(-1) as ChatCompletionChunk | undefined;
        if (lp && last?.choices?.[0]) last.choices[0].logprobs = { content: lp, refusal: null };
        return chunks;
      }
      case "response.output_text.done":
        return typeof ev.text === "string" ? textUpTo(`${oi}:${ci}:content`, ev.text, "content", true) : [];
      case "response.refusal.delta":
        return textUpTo(`${oi}:${ci}:refusal`, delta, "refusal", false);
      case "response.refusal.done":
        return typeof ev.refusal === "string" ? textUpTo(`${oi}:${ci}:refusal`, ev.refusal, "refusal", true) : [];
      case "response.output_item.added":
        return ev.item?.type === "function_call" ? startCall(oi, ev.item) : [];
      case "response.function_call_arguments.delta":
        return argsUpTo(oi, ev.delta, false);
      case "response.function_call_arguments.done":
        return argsUpTo(oi, ev.arguments, true);
      case "response.output_item.done":
        return itemDone(oi, ev.item);
      case "response.reasoning_summary_text.delta":
        return reasoning(`summary:${oi}:${si}`, ev.delta);
      case "response.reasoning_text.delta":
        return reasoning(`text:${oi}:${ci}`, ev.delta);
      case "response.completed":
        return close("completed", ev.response);
      case "response.incomplete":
        return close("incomplete", ev.response);
      case "response.failed":
      case "error":
        return upstreamError(ev);
      default:
        return [];
    }
  }

  // The text-delta frame around its content: JSON.stringify of chunk({ content }) gives these same bytes.
  const contentHead = `data: {"id":${JSON.stringify(opts.id)},"object":"chat.completion.chunk","created":${JSON.stringify(opts.created)},"model":${JSON.stringify(opts.model)},"choices":[{"index":0,"delta":{"content":`;
  const contentTail = `},"logprobs":null,"finish_reason":null}]${opts.includeUsage ? ',"usage":null' : ""}}\n\n`;

  function pushEncoded(ev: ResponsesStreamEvent): string {
    if (ended || ev.type !== "response.output_text.delta" || typeof ev.delta !== "string" || (Array.isArray(ev.logprobs) && ev.logprobs.length > 0)) {
      return encodeDataAll(push(ev));
    }
    const delta = ev.delta;
    if (delta === "") return "";
    return textDeltaFrame(typeof ev.output_index === "number" ? ev.output_index : -1, typeof ev.content_index === "number" ? ev.content_index : 0, delta, JSON.stringify(delta));
  }

  /** A text delta's chunk (after the role chunk when it opens the turn); `json` is the delta as a JSON string. */
  function textDeltaFrame(outputIndex: number, contentIndex: number, delta: string, json: string): string {
    const key = `${outputIndex}:${contentIndex}:content`;
    textSent.set(key, appendText(textSent.get(key) ?? "", delta));
    emittedOutput = true;
    const head = opened ? "" : encodeDataAll(open());
    return head + contentHead + json + contentTail;
  }

  function pushTextDelta(fields: TextDeltaFields): string {
    if (ended || fields.delta === "") return "";
    // The delta has no escapes (delta-text.ts): its JSON string is itself in quotes, as JSON.stringify writes it.
    return textDeltaFrame(fields.outputIndex, fields.contentIndex, fields.delta, `"${fields.delta}"`);
  }

  return {
    push,
    pushEncoded,
    pushTextDelta,
    pushOpening(type: string): string | null {
      if (type === "response.created" || type === "response.in_progress") return ended ? "" : encodeDataAll(open());
      if (type === "response.content_part.added" || type === "response.reasoning_summary_part.added") return "";
      return null;
    },
    finish(): object[] {
      if (ended) return [];
      return errorFrame("The upstream stream ended before the response completed.", "upstream_error", "upstream_error", null);
    },
    fail(err): object[] {
      if (ended) return [];
      return errorFrame(err.message, err.type, err.code, null);
    },
  };
}
