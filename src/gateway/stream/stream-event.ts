/**
 * One upstream event as the pipeline sees it on arrival, classified by what Gantry must do with it. Most of a
 * stream is deltas that need no change: those keep their JSON text and are parsed only if something asks for
 * their fields (tool markup in them, a keeper that cannot find their id, a translator that needs their text).
 * Every other event is parsed at once: the terminal event (usage, status), errors, and the structural events
 * (created, items, parts, `.done`) that the rewriter, the keeper and the translators read.
 */
import { parseStreamEvent, type SseEvent } from "./sse/decode";
import type { ResponsesStreamEvent } from "../responses-types";

/** Delta events whose text can be forwarded as the upstream wrote it. */
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
 * Events that open something (the response, a content part): forwarded as their text unless a reader needs their
 * fields (a kept response learns its id from `response.created`; a failure Gantry reports copies the last snapshot).
 */
export const OPENING_TYPES: ReadonlySet<string> = new Set(["response.created", "response.in_progress", "response.content_part.added", "response.reasoning_summary_part.added"]);

/** A delta kept as text: its payload is parsed on first use of `ev`. */
export interface DeltaEvent {
  readonly kind: "delta";
  readonly type: string;
  /** The event's JSON text, one line, as the upstream sent it. */
  readonly data: string;
  readonly ev: ResponsesStreamEvent;
}

/** An opening event (OPENING_TYPES) kept as text: its payload is parsed on first use of `ev`. */
export interface OpeningEvent {
  readonly kind: "opening";
  readonly type: string;
  readonly data: string;
  readonly ev: ResponsesStreamEvent;
}

/** Any other event: parsed on arrival. `data` is its upstream text (null when Gantry made the event). */
export interface ParsedEvent {
  readonly kind: "parsed";
  readonly type: string;
  readonly data: string | null;
  readonly ev: ResponsesStreamEvent;
}

export type UpstreamEvent = DeltaEvent | OpeningEvent | ParsedEvent;

/** An event forwarded as text unless read. */
export type UnreadEvent = DeltaEvent | OpeningEvent;

class LazyEvent {
  private parsed: ResponsesStreamEvent | null = null;
  constructor(
    readonly kind: "delta" | "opening",
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

export function parsedEvent(ev: ResponsesStreamEvent, data: string | null): ParsedEvent {
  return { kind: "parsed", type: ev.type, data, ev };
}

/**
 * The event an SSE frame carries, or "done" for a `[DONE]` marker. A frame is kept unparsed only when its event
 * name is a delta or opening type, its JSON opens with that same type (so the name cannot disagree with the payload), closes
 * with a brace (a payload cut short is parsed, and fails the stream in-band) and is one line (so it can be forwarded
 * in one `data:` line). Anything else is parsed now; a malformed payload throws.
 */
export function classify(sse: SseEvent): UpstreamEvent | "done" {
  const name = sse.event;
  const data = sse.data;
  if (name !== undefined && (DELTA_TYPES.has(name) || OPENING_TYPES.has(name)) && data.startsWith('{"type":"') && data.startsWith(name, 9) && data.charCodeAt(9 + name.length) === 34 && data.charCodeAt(data.length - 1) === 125 && !data.includes("\n")) {
    return new LazyEvent(DELTA_TYPES.has(name) ? "delta" : "opening", name, data, sse) as UnreadEvent;
  }
  const ev = parseStreamEvent(sse);
  if (ev === "done") return "done";
  return parsedEvent(ev, data);
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

/** Whether a text delta's JSON may carry tool markup: a `<`, raw or escaped as `\u003c`. */
export function mayHoldMarkup(data: string): boolean {
  return data.includes("<") || (data.includes("\\u003") && /\\u003[cC]/.test(data));
}
