/**
 * Applies the tool-markup cleaner to a Responses event stream: output text loses its XML-like tool markup,
 * and markup naming an offered tool becomes a real function_call item, injected right after the message it
 * came from. Output indexes of later items shift past injected ones; sequence numbers are renumbered once
 * the stream differs from upstream's.
 *
 * This runs on every streamed event, so until something actually changes it hands back the caller's own
 * event object, which lets the caller forward the upstream bytes without re-encoding.
 */

import {
  TERMINAL_EVENT_TYPES,
  type FunctionCallItem,
  type JsonObject,
  type OutputItem,
  type ResponsesStreamEvent,
} from "./responses-types";
import { cleanToolMarkup, createToolMarkupCleaner, type MarkupPiece, type ToolMarkupCleaner } from "./tool-markup";
import { TEXT_BEARING_TYPES, TEXT_DELTA, mayHoldMarkup, type UnreadEvent } from "./stream-event";
import { appendText } from "./growing-text";

export interface ResponsesStreamRewriter {
  /**
   * Whether an unread event (anything but the terminal event and errors) goes to the caller exactly as the upstream sent it, without
   * being parsed: true while the stream is unchanged and the event cannot carry markup. A skipped event is
   * remembered, and replayed (parsed) if a later text delta needs the text before it.
   */
  skips(e: UnreadEvent): boolean;
  /** The caller's events for one upstream event; `data` is its upstream JSON text when there is one. */
  push(ev: ResponsesStreamEvent, data?: string | null): ResponsesStreamEvent[];
  /** End of the upstream stream: releases text still withheld, for a stream that stopped without a terminal event. */
  finish(): ResponsesStreamEvent[];
}

interface PartState {
  /** null once the part is finished: later text events for it pass untouched. */
  cleaner: ToolMarkupCleaner | null;
  /** Cleaned text so far; replaces upstream's text in the `.done` events when `modified`. */
  text: string;
  modified: boolean;
  itemId: unknown;
  outputIndex: number;
  contentIndex: number;
}

interface MessageState {
  itemId: unknown;
  parts: Map<number, PartState>;
  /** Recovered calls not yet emitted as items. */
  pending: Array<{ name: string; arguments: string }>;
  /** Emitted function_call items (completed form), for the terminal response's output. */
  injected: FunctionCallItem[];
}

function defaultMakeId(): string {
  return crypto.randomUUID().replace(/-/g, "");
}

/**
 * The most skipped-event text kept for a replay. A skipped event holds its JSON text and, through it, the chunk it
 * was cut from, and a stream that never needs a replay (no markup, a terminal event with its output) would keep
 * every event of its reply until it ends; a caller that stopped reading held megabytes that way. Past this bound
 * they are replayed (parsed into the parts' state, which keeps only their text) and let go. A short reply never
 * gets there, so its events stay unparsed.
 */
const MAX_SKIPPED_CHARS = 64 * 1024;

export function createResponsesStreamRewriter(options: {
  toolNames: ReadonlySet<string>;
  idPrefix?: string;
  makeId?: () => string;
  /** MAX_SKIPPED_CHARS unless told (tests replay early to show it changes nothing). */
  maxSkippedChars?: number;
}): ResponsesStreamRewriter {
  const { toolNames } = options;
  const idPrefix = options.idPrefix ?? "";
  const makeId = options.makeId ?? defaultMakeId;
  const maxSkippedChars = options.maxSkippedChars ?? MAX_SKIPPED_CHARS;

  /** Once true, every event is copied and renumbered; before that, events pass by reference. */
  let changed = false;
  let nextSeq = 0;
  /** Highest upstream output_index seen; indexes up to it at the first injection keep their number. */
  let maxSeen = -1;
  let identityUpTo = -1;
  let injectedCount = 0;
  let maxDown = -1;
  const downIndex = new Map<number, number>();
  const messages = new Map<number, MessageState>();
  /** Completed items as sent downstream, to rebuild an empty terminal `output` that must carry injected calls. */
  const doneItems: Array<{ index: number; item: OutputItem }> = [];
  let lastPart: PartState | null = null;

  function mapIndex(u: number): number {
    if (injectedCount === 0 || u <= identityUpTo) return u;
    let d = downIndex.get(u);
    if (d === undefined) {
      d = u + injectedCount;
      downIndex.set(u, d);
      if (d > maxDown) maxDown = d;
    }
    return d;
  }

  /** Sends an upstream event: itself while nothing changed, else a renumbered copy with its index mapped. */
  function pass(ev: ResponsesStreamEvent): ResponsesStreamEvent {
    const u = ev.output_index;
    if (!changed) {
      // A maximum: a replayed (skipped) delta is older than the events already passed.
      if (typeof ev.sequence_number === "number" && ev.sequence_number >= nextSeq) nextSeq = ev.sequence_number + 1;
      if (typeof u === "number" && u > maxSeen) maxSeen = u;
      return ev;
    }
    const copy: ResponsesStreamEvent = { ...ev, sequence_number: nextSeq++ };
    if (typeof u === "number") {
      if (u > maxSeen) maxSeen = u;
      copy.output_index = mapIndex(u);
    }
    return copy;
  }

  /** Sends an event built here (a copy or a new one); its `output_index`, if any, is still upstream's. */
  function send(ev: ResponsesStreamEvent): ResponsesStreamEvent {
    changed = true;
    ev.sequence_number = nextSeq++;
    if (typeof ev.output_index === "number") {
      if (ev.output_index > maxSeen) maxSeen = ev.output_index;
      ev.output_index = mapIndex(ev.output_index);
    }
    return ev;
  }

  function messageAt(u: number, itemId: unknown): MessageState {
    let msg = messages.get(u);
    if (!msg) {
      msg = { itemId, parts: new Map(), pending: [], injected: [] };
      messages.set(u, msg);
    }
    return msg;
  }

  function partAt(u: number, c: number, itemId: unknown): PartState {
    if (lastPart !== null && lastPart.outputIndex === u && lastPart.contentIndex === c) return lastPart;
    const msg = messageAt(u, itemId);
    let part = msg.parts.get(c);
    if (!part) {
      part = { cleaner: createToolMarkupCleaner({ toolNames }), text: "", modified: false, itemId, outputIndex: u, contentIndex: c };
      msg.parts.set(c, part);
    }
    lastPart = part;
    return part;
  }

  /** Folds pieces into the part; returns the text to emit now. */
  function absorb(part: PartState, pieces: MarkupPiece[]): string {
    let text = "";
    for (const p of pieces) {
      if (p.type === "text") text += p.text;
      else messages.get(part.outputIndex)!.pending.push({ name: p.name, arguments: p.arguments });
    }
    part.text = appendText(part.text, text);
    return text;
  }

  /** Releases what the part's cleaner still withholds, as one more delta before the part's `.done` events. */
  function finishPart(part: PartState, out: ResponsesStreamEvent[]): void {
    if (part.cleaner === null) return;
    const pieces = part.cleaner.flush();
    part.cleaner = null;
    if (pieces.length === 0) return;
    part.modified = true;
    const text = absorb(part, pieces);
    if (text !== "") {
      const delta: ResponsesStreamEvent = {
        type: "response.output_text.delta",
        output_index: part.outputIndex,
        content_index: part.contentIndex,
        delta: text,
      };
      if (part.itemId !== undefined) delta.item_id = part.itemId;
      out.push(send(delta));
    }
  }

  function inject(msg: MessageState, out: ResponsesStreamEvent[]): void {
    for (const call of msg.pending) {
      if (injectedCount === 0) {
        identityUpTo = maxSeen;
        maxDown = Math.max(maxDown, maxSeen);
      }
      const index = ++maxDown;
      injectedCount++;
      const suffix = makeId();
      const base = { id: `fc_${idPrefix}${suffix}`, type: "function_call" as const, call_id: `call_${idPrefix}${suffix}`, name: call.name };
      const done: FunctionCallItem = { ...base, status: "completed", arguments: call.arguments };
      // Built with the downstream index already in place, so they skip `send`'s upstream→downstream mapping.
      const events: ResponsesStreamEvent[] = [
        { type: "response.output_item.added", output_index: index, item: { ...base, status: "in_progress", arguments: "" } },
        { type: "response.function_call_arguments.delta", item_id: base.id, output_index: index, delta: call.arguments },
        { type: "response.function_call_arguments.done", item_id: base.id, output_index: index, arguments: call.arguments },
        { type: "response.output_item.done", output_index: index, item: done },
      ];
      changed = true;
      for (const ev of events) {
        ev.sequence_number = nextSeq++;
        out.push(ev);
      }
      msg.injected.push(done);
      doneItems.push({ index, item: done });
    }
    msg.pending = [];
  }

  function onDelta(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    const u = ev.output_index;
    const delta = ev.delta;
    // An empty delta carries nothing to clean: passed as it came (dropping it would renumber the rest of the stream).
    if (typeof u !== "number" || typeof delta !== "string" || delta === "") return [pass(ev)];
    const part = partAt(u, typeof ev.content_index === "number" ? ev.content_index : 0, ev.item_id);
    if (part.cleaner === null) return [pass(ev)];
    const pieces = part.cleaner.push(delta);
    if (!part.modified && pieces.length === 1 && pieces[0].type === "text" && pieces[0].text === delta) {
      part.text = appendText(part.text, delta);
      return [pass(ev)];
    }
    part.modified = true;
    const text = absorb(part, pieces);
    return text === "" ? dropped() : [send({ ...ev, delta: text })];
  }

  function dropped(): ResponsesStreamEvent[] {
    changed = true;
    return [];
  }

  function onTextDone(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    const u = ev.output_index;
    if (typeof u !== "number" || typeof ev.text !== "string") return [pass(ev)];
    const c = typeof ev.content_index === "number" ? ev.content_index : 0;
    const out: ResponsesStreamEvent[] = [];
    const part = cleanedPart(u, c, ev.item_id, ev.text, out);
    out.push(part.modified ? send({ ...ev, text: part.text }) : pass(ev));
    return out;
  }

  /**
   * The finished part for (u, c). A part that streamed deltas is flushed; one that never did (upstream sent
   * only the finished text) is cleaned whole, with nothing to emit for it but the corrected `.done` text.
   */
  function cleanedPart(u: number, c: number, itemId: unknown, fullText: string, out: ResponsesStreamEvent[]): PartState {
    const existing = messages.get(u)?.parts.get(c);
    if (existing) {
      finishPart(existing, out);
      return existing;
    }
    const part = partAt(u, c, itemId);
    part.cleaner = null;
    if (fullText.indexOf("<") === -1) {
      part.text = fullText;
      return part;
    }
    const r = cleanToolMarkup(fullText, toolNames);
    part.text = r.text;
    part.modified = r.text !== fullText || r.calls.length > 0;
    messages.get(u)!.pending.push(...r.calls);
    return part;
  }

  function onPartDone(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    const u = ev.output_index;
    const part = ev.part;
    // Only answer text is cleaned; reasoning parts and refusals keep what the model wrote.
    if (typeof u !== "number" || part === null || typeof part !== "object" || part.type !== "output_text" || typeof part.text !== "string") {
      return [pass(ev)];
    }
    const c = typeof ev.content_index === "number" ? ev.content_index : 0;
    const out: ResponsesStreamEvent[] = [];
    const state = cleanedPart(u, c, ev.item_id, part.text, out);
    out.push(state.modified ? send({ ...ev, part: { ...part, text: state.text } }) : pass(ev));
    return out;
  }

  /** The message with its modified text parts replaced by their cleaned text, or the item itself if none is. */
  function cleanedMessage(item: JsonObject, msg: MessageState): JsonObject {
    if (!Array.isArray(item.content)) return item;
    let content: unknown[] | null = null;
    for (let c = 0; c < item.content.length; c++) {
      const state = msg.parts.get(c);
      const p: unknown = item.content[c];
      if (!state?.modified || p === null || typeof p !== "object") continue;
      content ??= [...item.content];
      content[c] = { ...(p as JsonObject), text: state.text };
    }
    return content === null ? item : { ...item, content };
  }

  function onItemDone(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    const u = ev.output_index;
    const item = ev.item;
    if (typeof u !== "number" || item === null || typeof item !== "object") return [pass(ev)];
    if (item.type !== "message" || !Array.isArray(item.content)) {
      const sent = pass(ev);
      doneItems.push({ index: sent.output_index, item });
      return [sent];
    }
    const out: ResponsesStreamEvent[] = [];
    item.content.forEach((p: unknown, c: number) => {
      const text = p !== null && typeof p === "object" ? (p as JsonObject).text : undefined;
      if (typeof text === "string" && (p as JsonObject).type === "output_text") cleanedPart(u, c, item.id, text, out);
    });
    const msg = messages.get(u);
    const cleaned = msg ? cleanedMessage(item, msg) : item;
    const sent = cleaned === item ? pass(ev) : send({ ...ev, item: cleaned });
    out.push(sent);
    doneItems.push({ index: sent.output_index, item: cleaned as OutputItem });
    if (msg && msg.pending.length > 0) inject(msg, out);
    return out;
  }

  /** Whatever is still open when the stream ends: withheld text goes out, recovered calls become items. */
  function settleAll(out: ResponsesStreamEvent[]): void {
    for (const msg of messages.values()) {
      for (const part of msg.parts.values()) finishPart(part, out);
      if (msg.pending.length > 0) inject(msg, out);
    }
  }

  function onTerminal(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    const out: ResponsesStreamEvent[] = [];
    settleAll(out);
    const response = ev.response;
    if (response === null || typeof response !== "object" || !Array.isArray(response.output)) {
      out.push(pass(ev));
      return out;
    }
    // Upstream may send an empty terminal output and leave the items to the stream. Clients that take the
    // terminal response as the final one (the SDKs' stream helpers do) would then see nothing: fill it in.
    const emptyButStreamed = response.output.length === 0 && doneItems.length > 0;
    if (!changed && !emptyButStreamed) {
      out.push(pass(ev));
      return out;
    }
    out.push(send({ ...ev, response: { ...response, output: rewriteOutput(response.output) } }));
    return out;
  }

  /** The terminal output as it is downstream: cleaned message texts, each followed by the calls taken from it. */
  function rewriteOutput(output: unknown[]): unknown[] {
    // An empty output is rebuilt from the items as sent (an output holding only our calls would look complete
    // and hide the message).
    if (output.length === 0) return [...doneItems].sort((a, b) => a.index - b.index).map((d) => d.item);
    const byId = new Map<unknown, MessageState>();
    for (const msg of messages.values()) if (msg.itemId !== undefined) byId.set(msg.itemId, msg);
    const placed = new Set<MessageState>();
    const result: unknown[] = [];
    output.forEach((item, index) => {
      const o = item as JsonObject | null;
      const msg =
        o !== null && typeof o === "object" && o.type === "message"
          ? o.id !== undefined
            ? byId.get(o.id)
            : messages.get(index)
          : undefined;
      if (!msg || placed.has(msg)) {
        result.push(item);
        return;
      }
      placed.add(msg);
      result.push(cleanedMessage(o as JsonObject, msg), ...msg.injected);
    });
    for (const msg of messages.values()) if (!placed.has(msg)) result.push(...msg.injected);
    return result;
  }

  /** Deltas forwarded unparsed, in order, for a replay when a later text delta needs the text of its part. */
  let skipped: UnreadEvent[] = [];
  /** Their JSON text's length: past MAX_SKIPPED_CHARS they are replayed at once (see there). */
  let skippedChars = 0;

  /** Reads the skipped events into the parts' state; what they produce was sent already. */
  function replaySkipped(): void {
    const replay = skipped;
    skipped = [];
    skippedChars = 0;
    const seq = nextSeq;
    for (const e of replay) push(e.ev);
    // Replayed after a change, they were renumbered into nothing: the numbering goes on where it was.
    if (changed) nextSeq = seq;
  }

  function push(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    switch (ev.type) {
      case "response.output_text.delta":
        return onDelta(ev);
      case "response.output_text.done":
        return onTextDone(ev);
      case "response.content_part.done":
        return onPartDone(ev);
      case "response.output_item.done":
        return onItemDone(ev);
      default:
        return TERMINAL_EVENT_TYPES.has(ev.type) ? onTerminal(ev) : [pass(ev)];
    }
  }

  /**
   * Whether an event's handling depends on the state of parts whose events were skipped: a text delta (its part's
   * text so far), text that may hold markup (a part's cleaned text), a terminal event without output (rebuilt from
   * the finished items). Everything else reads no part state, so the skipped events need not be read before it.
   */
  function needsReplay(ev: ResponsesStreamEvent, data: string | null): boolean {
    if (ev.type === TEXT_DELTA) return true;
    if (TEXT_BEARING_TYPES.has(ev.type)) return data === null || mayHoldMarkup(data);
    if (TERMINAL_EVENT_TYPES.has(ev.type)) {
      const output = ev.response !== null && typeof ev.response === "object" ? ev.response.output : undefined;
      return !Array.isArray(output) || output.length === 0;
    }
    return false;
  }

  return {
    skips(e: UnreadEvent): boolean {
      if (changed || (TEXT_BEARING_TYPES.has(e.type) && mayHoldMarkup(e.data))) return false;
      skipped.push(e);
      skippedChars += e.data.length;
      if (skippedChars > maxSkippedChars) replaySkipped();
      return true;
    },
    push(ev: ResponsesStreamEvent, data: string | null = null): ResponsesStreamEvent[] {
      if (!changed && typeof ev.sequence_number === "number" && ev.sequence_number > nextSeq) nextSeq = ev.sequence_number;
      // The parts these events belong to are rebuilt as if they had been read.
      if (skipped.length > 0 && needsReplay(ev, data)) replaySkipped();
      return push(ev);
    },
    finish(): ResponsesStreamEvent[] {
      const out: ResponsesStreamEvent[] = [];
      settleAll(out);
      return out;
    },
  };
}
