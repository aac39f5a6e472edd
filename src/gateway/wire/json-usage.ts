/**
 * Where a raw reply's usage is when the reply is one JSON object (a non-streamed upstream answer): parsed whole when
 * it is small, else found from the end of its text, where a response object's `usage` is.
 */
import type { ResponsesUsage } from "./responses-types";

/** A JSON reply up to this size is parsed whole for its usage; past it, only its tail is kept and read. */
export const MAX_JSON_USAGE_SCAN = 1024 * 1024;
/** What is kept of a larger JSON reply: its end, where a response object's `usage` is. */
export const JSON_TAIL_BYTES = 256 * 1024;

/** The text's last `"usage": {…}` object, found from its end (strings skipped), or null. */
export function lastUsageObject(text: string): ResponsesUsage | null {
  return lastUsage(text)?.usage ?? null;
}

/** lastUsageObject, with the index of the brace that closes the object. */
function lastUsage(text: string): { usage: ResponsesUsage; end: number } | null {
  for (let at = text.lastIndexOf('"usage"'); at >= 0; at = text.lastIndexOf('"usage"', at - 1)) {
    const open = text.indexOf("{", at);
    const colon = text.indexOf(":", at + 7);
    // A key: only blanks between it and its colon, and between the colon and the brace (a string value "usage"
    // followed by another key's object is not it).
    if (open < 0 || colon < 0 || colon > open || text.slice(at + 7, colon).trim() !== "" || text.slice(colon + 1, open).trim() !== "") continue;
    const end = matchingBrace(text, open);
    if (end < 0) continue;
    try {
      const usage = JSON.parse(text.slice(open, end + 1));
      if (usage && typeof usage === "object" && !Array.isArray(usage)) return { usage: usage as ResponsesUsage, end };
    } catch {
      // Not this one.
    }
  }
  return null;
}

/** How much of a terminal event's text may follow its usage for the text to be read: past it, it is parsed. */
const MAX_USAGE_TAIL = 4096;

/**
 * A terminal event's usage read from its JSON text, without parsing the response it carries (whose output is the
 * whole answer, so parsing it costs as much as the answer is long): the text's last `"usage": {…}` object, taken
 * only when it is two objects deep (what follows it closes exactly two more: the response, the event) and has
 * usage's shape (token counts as numbers). A response object writes `usage` after its output, so what follows is
 * short; when it is not, reading it would cost what parsing does. undefined when the text does not show usage that
 * way: the caller then parses the event. Not told apart: another object of the event itself, after the response,
 * holding a usage of its own (no upstream sends one; the event's members are its type, number and response).
 */
export function terminalUsageFromText(data: string): ResponsesUsage | undefined {
  const found = lastUsage(data);
  if (found === null || data.length - found.end > MAX_USAGE_TAIL || closesAfter(data, found.end + 1) !== 2) return undefined;
  const { usage } = found;
  if (typeof usage.input_tokens !== "number" || typeof usage.output_tokens !== "number") return undefined;
  return usage;
}

/** How many more objects or arrays close than open in text[from…] (strings skipped); -1 when malformed. */
function closesAfter(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      i = stringEnd(text, i);
      if (i >= text.length) return -1;
    } else if (c === 123 || c === 91) depth--;
    else if (c === 125 || c === 93) depth++;
  }
  return depth;
}

/** The index of the `}` closing the object opened at `open`, skipping strings; -1 when it does not close. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) i = stringEnd(text, i);
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** The index of the quote closing the string opened at `open` (escapes skipped); text.length when it does not close. */
function stringEnd(text: string, open: number): number {
  let i = open + 1;
  for (; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
  return i;
}
