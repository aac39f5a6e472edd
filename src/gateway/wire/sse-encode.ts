/**
 * SSE framing for what the gateway sends. JSON.stringify escapes CR and LF inside strings, so a payload is
 * always one `data:` line and cannot break the framing.
 */

import type { ResponsesStreamEvent } from "./responses-types";

export const SSE_DONE = "data: [DONE]\n\n";
export const SSE_KEEPALIVE = ": keep-alive\n\n";

const HAS_LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /[\r\n]/g;

/** `event: <type>` + `data: <json>`, the framing OpenAI uses for Responses streams. */
export function encodeEvent(ev: ResponsesStreamEvent): string {
  return frameEvent(ev.type, JSON.stringify(ev));
}

/** The frame of an event whose JSON text is at hand (`json` must be one line: JSON.stringify's, or checked). */
export function frameEvent(eventType: string, json: string): string {
  // The type is echoed from upstream into a raw line; a line break in it would forge extra fields.
  const type = HAS_LINE_BREAK.test(eventType) ? eventType.replace(LINE_BREAKS, "") : eventType;
  return `event: ${type}\ndata: ${json}\n\n`;
}

/** A data-only frame, as Chat Completions streams use. */
export function encodeData(obj: unknown): string {
  // JSON.stringify(undefined) is undefined, which would print "undefined": send JSON null instead.
  return `data: ${JSON.stringify(obj) ?? "null"}\n\n`;
}

/** Data-only frames of several objects, in order. */
export function encodeDataAll(objs: readonly object[]): string {
  let out = "";
  for (const o of objs) out += encodeData(o);
  return out;
}
