/**
 * Streaming Server-Sent-Events decoder (WHATWG HTML "event stream interpretation"), plus the step that turns
 * one decoded event into a Responses stream event.
 *
 * One deliberate deviation from the spec: at end of stream, a final event that has data but no closing blank
 * line is still dispatched, because real upstreams sometimes omit that last blank line.
 */

import type { ResponsesStreamEvent } from "./responses-types";

export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
  retry?: number;
}

export interface SseDecoder {
  push(chunk: Uint8Array | string): SseEvent[];
  end(): SseEvent[];
}

const LF = "\n";
const CR = "\r";
const BOM = "\uFEFF";
const COLON = 58;
const SPACE = 32;
const DIGITS_ONLY = /^[0-9]+$/;
const STREAM = { stream: true } as const;

/**
 * The default bound on one event (its data) or one line, in characters of decoded text (a byte each for the ASCII
 * of JSON): far above any real event, big encrypted reasoning and tool arguments included.
 */
export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;

/** One event, or one line, larger than the decoder's bound: the stream is refused instead of buffered without end. */
export class SseEventTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`an event was larger than the limit of ${limit} bytes`);
    this.name = "SseEventTooLargeError";
  }
}

/**
 * `maxEventBytes` bounds what is buffered for one event: the line being assembled and the event's data. Past it,
 * push() throws SseEventTooLargeError. Checked with running lengths, once per chunk and per data line.
 */
export function createSseDecoder(maxEventBytes = DEFAULT_MAX_EVENT_BYTES): SseDecoder {
  // ignoreBOM keeps the BOM in the text so that one rule strips it, whether the first chunk was bytes or a string.
  const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  let started = false;
  // A CR ended the last chunk: an LF opening the next one belongs to the same line break.
  let skipLF = false;
  // Pieces of the current unterminated line; joined once, when its terminator arrives, so a long line that
  // trickles in over many chunks costs O(length), not O(length^2).
  let pending: string[] = [];
  let pendingLength = 0;

  // Buffers of the event being assembled. `data === null` means no data line yet (the spec's empty buffer).
  let data: string | null = null;
  let eventType = "";
  let retry: number | undefined;
  // Per spec the last event id outlives a dispatch: every later event carries it until another id line.
  let lastId = "";

  let out: SseEvent[] = [];

  function dispatch(): void {
    if (data !== null) {
      const ev: SseEvent = { data };
      if (eventType !== "") ev.event = eventType;
      if (lastId !== "") ev.id = lastId;
      if (retry !== undefined) ev.retry = retry;
      out.push(ev);
    }
    data = null;
    eventType = "";
    retry = undefined;
  }

  /** The field value of a line whose name ends at `nameEnd` (a colon or the line's end), one leading space removed. */
  function valueOf(text: string, nameEnd: number, end: number): string {
    if (nameEnd === end) return "";
    const start = nameEnd + 1 < end && text.charCodeAt(nameEnd + 1) === SPACE ? nameEnd + 2 : nameEnd + 1;
    return text.slice(start, end);
  }

  /**
   * One line, given as text[start, end) so the usual line is never copied out: only its value is sliced.
   * Only four field names matter, so instead of searching for the colon, each name is compared in place and
   * must be followed by the colon or the line's end ("data2: x" is an unknown field and ignored).
   */
  function processLine(text: string, start: number, end: number): void {
    if (start === end) {
      dispatch();
      return;
    }
    const first = text.charCodeAt(start);
    if (first === COLON) return;
    const len = end - start;
    if (first === 100 /* d */) {
      if (len >= 4 && text.startsWith("data", start) && (len === 4 || text.charCodeAt(start + 4) === COLON)) {
        const value = valueOf(text, start + 4, end);
        if ((data === null ? value.length : data.length + 1 + value.length) > maxEventBytes) throw new SseEventTooLargeError(maxEventBytes);
        data = data === null ? value : data + LF + value;
      }
    } else if (first === 101 /* e */) {
      if (len >= 5 && text.startsWith("event", start) && (len === 5 || text.charCodeAt(start + 5) === COLON)) {
        eventType = valueOf(text, start + 5, end);
      }
    } else if (first === 105 /* i */) {
      if (len >= 2 && text.startsWith("id", start) && (len === 2 || text.charCodeAt(start + 2) === COLON)) {
        const value = valueOf(text, start + 2, end);
        if (!value.includes("\0")) lastId = value;
      }
    } else if (first === 114 /* r */) {
      if (len >= 5 && text.startsWith("retry", start) && (len === 5 || text.charCodeAt(start + 5) === COLON)) {
        const value = valueOf(text, start + 5, end);
        if (DIGITS_ONLY.test(value)) retry = Number(value);
      }
    }
  }

  function feed(text: string): void {
    if (text.length === 0) return;
    let pos = 0;
    if (!started) {
      started = true;
      if (text.startsWith(BOM)) pos = 1;
    }
    if (skipLF) {
      skipLF = false;
      if (text.charCodeAt(pos) === 10) pos++;
    }

    // Both positions are cached and only re-searched once passed, so a chunk with no CR is searched for one
    // once, not once per line.
    let lf = text.indexOf(LF, pos);
    let cr = text.indexOf(CR, pos);
    while (lf !== -1 || cr !== -1) {
      let end: number;
      let next: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        end = lf;
        next = lf + 1;
      } else {
        end = cr;
        if (cr + 1 < text.length) {
          next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        } else {
          next = cr + 1;
          skipLF = true;
        }
      }

      if (pending.length > 0) {
        if (pendingLength + (end - pos) > maxEventBytes) throw new SseEventTooLargeError(maxEventBytes);
        pending.push(text.slice(pos, end));
        const line = pending.join("");
        pending = [];
        pendingLength = 0;
        processLine(line, 0, line.length);
      } else {
        processLine(text, pos, end);
      }

      pos = next;
      if (lf !== -1 && lf < pos) lf = text.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = text.indexOf(CR, pos);
    }
    if (pos < text.length) {
      pendingLength += text.length - pos;
      if (pendingLength > maxEventBytes) throw new SseEventTooLargeError(maxEventBytes);
      pending.push(pos === 0 ? text : text.slice(pos));
    }
  }

  function take(): SseEvent[] {
    if (out.length === 0) return [];
    const events = out;
    out = [];
    return events;
  }

  return {
    push(chunk) {
      if (typeof chunk === "string") {
        // Bytes held back for an unfinished character cannot continue into a string: flush them first.
        feed(utf8.decode());
        feed(chunk);
      } else {
        feed(utf8.decode(chunk, STREAM));
      }
      return take();
    },

    end() {
      feed(utf8.decode());
      if (pending.length > 0) {
        const line = pending.join("");
        pending = [];
        pendingLength = 0;
        processLine(line, 0, line.length);
      }
      dispatch();
      const events = take();
      // decode() without {stream} has already reset the TextDecoder; the rest is reset here.
      started = false;
      skipLF = false;
      lastId = "";
      return events;
    },
  };
}

/** A stream that cannot be understood: malformed JSON, or a payload that is not an event. */
export class StreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamProtocolError";
  }
}

const SNIPPET_MAX = 200;

function snippet(text: string): string {
  return text.length > SNIPPET_MAX ? `${text.slice(0, SNIPPET_MAX)}…` : text;
}

/**
 * The payload of one SSE event as a Responses stream event. `[DONE]` (appended by some gateways, never by
 * OpenAI) is reported as "done". The type comes from the payload's `type`; without one, a payload carrying an
 * `error` is an error event (the in-band `data: {"error": …}` form), otherwise the SSE `event:` name is used.
 */
export function parseStreamEvent(e: SseEvent): ResponsesStreamEvent | "done" {
  const raw = e.data;
  // Only short payloads can be a padded [DONE]; JSON events skip the trim.
  if (raw === "[DONE]" || (raw.length <= 16 && raw.trim() === "[DONE]")) return "done";

  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    const where = e.event ? ` in "${e.event}" event` : "";
    throw new StreamProtocolError(`malformed JSON${where}: ${(err as Error).message}; data: ${snippet(raw)}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new StreamProtocolError(`stream event payload is not a JSON object: ${snippet(raw)}`);
  }

  const ev = parsed as Record<string, unknown>;
  if (typeof ev.type === "string" && ev.type !== "") return ev as ResponsesStreamEvent;
  if (ev.error != null) {
    ev.type = "error";
  } else if (e.event) {
    ev.type = e.event;
  } else {
    throw new StreamProtocolError(`stream event has neither a type nor an event name: ${snippet(raw)}`);
  }
  return ev as ResponsesStreamEvent;
}
