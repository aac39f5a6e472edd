/**
 * One upstream event as the pipeline sees it on arrival, classified by what Gantry must do with it. Most events need
 * no change: they keep their JSON text and are parsed only if something asks for their fields (tool markup in them,
 * a keeper learning ids, a translator reading text). The terminal event (usage, status) and errors are parsed at
 * once: the ledger needs them whoever the caller is.
 */
import { parseStreamEvent, type SseEvent } from "./sse-decode";
import { TERMINAL_EVENT_TYPES, type ResponseObject, type ResponsesStreamEvent, type ResponsesUsage } from "./responses-types";
import { streamErrorOf, usageOf, type StreamError } from "./upstream-events";

/** Delta events: the model's output, counted for a cut call's estimate and against an output bound Gantry enforces. */
export const DELTA_TYPES: ReadonlySet<string> = new Set([
  "response.output_text.delta",
  "response.refusal.delta",
  "response.reasoning_text.delta",
  "response.reasoning_summary_text.delta",
  "response.function_call_arguments.delta",
  "response.custom_tool_call_input.delta",
]);

export const TEXT_DELTA = "response.output_text.delta";

/**
 * Events that open something (the response, a content part) and carry nothing a translator reads: the chat
 * translation answers them from their type alone.
 */
export const OPENING_TYPES: ReadonlySet<string> = new Set(["response.created", "response.in_progress", "response.content_part.added", "response.reasoning_summary_part.added"]);

/** Events whose payload holds answer text that tool markup could be in (a delta, a `.done`'s text, a finished message). */
export const TEXT_BEARING_TYPES: ReadonlySet<string> = new Set([TEXT_DELTA, "response.output_text.done", "response.content_part.done", "response.output_item.done"]);

/** Events that carry a `response` or an `item` object: a kept response learns ids and items from them. */
export const OBJECT_BEARING_TYPES: ReadonlySet<string> = new Set(["response.created", "response.in_progress", "response.output_item.added", "response.output_item.done"]);

/** A delta kept as text: its payload is parsed on first use of `ev`. */
export interface DeltaEvent {
  readonly kind: "delta";
  readonly type: string;
  /** The event's JSON text, one line, as the upstream sent it. */
  readonly data: string;
  readonly ev: ResponsesStreamEvent;
}

/** Any other Responses event (not terminal, not an error), kept as text: its payload is parsed on first use of `ev`. */
export interface TextEvent {
  readonly kind: "text";
  readonly type: string;
  readonly data: string;
  readonly ev: ResponsesStreamEvent;
}

/** The response's end (completed, incomplete or failed): parsed on arrival, for what the ledger needs. */
export interface TerminalEvent {
  readonly kind: "terminal";
  readonly type: TerminalType;
  /** Its upstream text; null when Gantry made the event. */
  readonly data: string | null;
  readonly ev: ResponsesStreamEvent;
  readonly response: ResponseObject | null;
  readonly usage: ResponsesUsage | null;
  /** A `response.failed`'s error, else null. */
  readonly error: StreamError | null;
}

/** An in-band `error` event: parsed on arrival. */
export interface ErrorEvent {
  readonly kind: "error";
  readonly type: "error";
  readonly data: string | null;
  readonly ev: ResponsesStreamEvent;
  readonly error: StreamError;
}

/** Any other event read whole: one whose text could not be kept, or one Gantry made. */
export interface OtherEvent {
  readonly kind: "other";
  readonly type: string;
  readonly data: string | null;
  readonly ev: ResponsesStreamEvent;
}

/** An upstream event by what the pipeline does with it. */
export type UpstreamEvent = DeltaEvent | TextEvent | TerminalEvent | ErrorEvent | OtherEvent;

/** An event forwarded as its text unless something reads it. */
export type UnreadEvent = DeltaEvent | TextEvent;

export type TerminalType = "response.completed" | "response.incomplete" | "response.failed";

export function isUnread(e: UpstreamEvent): e is UnreadEvent {
  return e.kind === "delta" || e.kind === "text";
}

class LazyEvent {
  private parsed: ResponsesStreamEvent | null = null;
  constructor(
    readonly kind: "delta" | "text",
    readonly type: string,
    readonly data: string,
    private readonly sse: SseEvent,
  ) {}

  get ev(): ResponsesStreamEvent {
    if (this.parsed) return this.parsed;
    const ev = parseStreamEvent(this.sse);
    if (ev === "done") throw new Error("a delta event cannot be [DONE]");
    return (this.parsed = ev);
  }
}

/** A parsed event, classified: terminal, error or other. `data` is its upstream text (null when Gantry made it). */
export function parsedEvent(ev: ResponsesStreamEvent, data: string | null): TerminalEvent | ErrorEvent | OtherEvent {
  if (TERMINAL_EVENT_TYPES.has(ev.type)) {
    const response = ev.response !== null && typeof ev.response === "object" && !Array.isArray(ev.response) ? (ev.response as ResponseObject) : null;
    return { kind: "terminal", type: ev.type as TerminalType, data, ev, response, usage: usageOf(ev), error: streamErrorOf(ev) };
  }
  if (ev.type === "error") return { kind: "error", type: "error", data, ev, error: streamErrorOf(ev)! };
  return { kind: "other", type: ev.type, data, ev };
}

/**
 * The event an SSE frame carries, or "done" for a `[DONE]` marker. A frame is kept unparsed only when its event
 * name is a Responses event type other than terminal ones, its JSON opens with that same type (so the name cannot disagree with the payload), closes
 * with a brace (a payload cut short is parsed, and fails the stream in-band) and is one line (so it can be forwarded
 * in one `data:` line). Anything else is parsed now; a malformed payload throws.
 */
export function classify(sse: SseEvent): UpstreamEvent | "done" {
  const name = sse.event;
  const data = sse.data;
  if (name !== undefined && name.startsWith("response.") && !TERMINAL_EVENT_TYPES.has(name) && opensWithType(data, name) && data.charCodeAt(data.length - 1) === 125 && !data.includes("\n")) {
    return new LazyEvent(DELTA_TYPES.has(name) ? "delta" : "text", name, data, sse) as UnreadEvent;
  }
  const ev = parseStreamEvent(sse);
  if (ev === "done") return "done";
  return parsedEvent(ev, data);
}

/** Whether an event's JSON text opens with `{"type":"NAME"`: its payload says the type its SSE name says. */
export function opensWithType(data: string, name: string): boolean {
  return data.startsWith('{"type":"') && data.startsWith(name, 9) && data.charCodeAt(9 + name.length) === 34;
}

/**
 * The UTF-8 size of a delta's `delta` string read from its JSON text without parsing it (an escape counts as its
 * escaped length): the output a cut call's estimate counts.
 */
export function deltaBytesOf(data: string): number {
  const at = data.indexOf('"delta":"');
  if (at < 0) return 0;
  let bytes = 0;
  for (let i = at + 9; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 34) break;
    if (c === 92) {
      i++;
      bytes += 2;
    } else bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
  }
  return bytes;
}

/** Whether an event's JSON may carry tool markup: a `<`, raw or escaped as `\u003c` (Go's encoder escapes it). */
export function mayHoldMarkup(data: string): boolean {
  return MARKUP_CANDIDATE.test(data);
}

const MARKUP_CANDIDATE = /<|\\u003[cC]/;
