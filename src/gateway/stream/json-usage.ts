/**
 * Where a raw reply's usage is when the reply is one JSON object (a non-streamed upstream answer): parsed whole when
 * it is small, else found from the end of its text, where a response object's `usage` is.
 */
import type { ResponsesUsage } from "../responses-types";

/** A JSON reply up to this size is parsed whole for its usage; past it, only its tail is kept and read. */
export const MAX_JSON_USAGE_SCAN = 1024 * 1024;
/** What is kept of a larger JSON reply: its end, where a response object's `usage` is. */
export const JSON_TAIL_BYTES = 256 * 1024;

/** The text's last `"usage": {…}` object, found from its end (strings skipped), or null. */
export function lastUsageObject(text: string): ResponsesUsage | null {
  for (let at = text.lastIndexOf('"usage"'); at >= 0; at = text.lastIndexOf('"usage"', at - 1)) {
    const open = text.indexOf("{", at);
    const colon = text.indexOf(":", at + 7);
    if (open < 0 || colon < 0 || colon > open || text.slice(colon + 1, open).trim() !== "") continue;
    const end = matchingBrace(text, open);
    if (end < 0) continue;
    try {
      const usage = JSON.parse(text.slice(open, end + 1));
      if (usage && typeof usage === "object" && !Array.isArray(usage)) return usage as ResponsesUsage;
    } catch {
      // Not this one.
    }
  }
  return null;
}

/** The index of the `}` closing the object opened at `open`, skipping strings; -1 when it does not close. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}
