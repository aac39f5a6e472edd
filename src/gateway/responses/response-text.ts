/**
 * The text of the response a terminal event carries, cut from the event's JSON text as the caller got it (Gantry's
 * ids already in it), so a kept stream stores that text instead of serialising the parsed response again (about 3 µs
 * of a kept stream's write for the bench's 1.3 KB response). Cut only in the plain case, where where it starts and
 * ends is certain: `response` is the event's last key, and nothing before its key opens an object or an array (so
 * the first `"response":` is that key: a quote inside a string is escaped, and only a key is followed by a colon).
 * Anything else returns null, and the parsed response is serialised as before.
 */
const KEY = '"response":';

/** `event` is `text` parsed: its keys, in the order the text has them, tell whether `response` is the last one. */
export function responseTextOf(text: string, event: Record<string, unknown>): string | null {
  const keys = Object.keys(event);
  // A key that is a number is listed first whatever its place in the text: then the order says nothing.
  if (keys[keys.length - 1] !== "response" || keys.some(isIndex)) return null;
  const at = text.indexOf(KEY);
  if (at < 0) return null;
  // `{` only at 0, no `[` before the key: the key is at the top level.
  const open = text.indexOf("{", 1);
  if (open >= 0 && open < at) return null;
  const list = text.indexOf("[");
  if (list >= 0 && list < at) return null;
  const end = text.lastIndexOf("}");
  const value = text.slice(at + KEY.length, end).trim();
  return value.startsWith("{") && value.endsWith("}") ? value : null;
}

function isIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57;
}
