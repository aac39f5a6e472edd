/**
 * A text delta's fields read from its JSON text, for the chat translation of a stream: most of a stream's events are
 * `response.output_text.delta`, and the chat chunk needs only its text and where it goes. Reading them from the text
 * costs a scan of the event's few dozen bytes where parsing builds an object for each.
 *
 * Read only what is unambiguous, and give up (null: the caller parses the event) on anything else: a delta with
 * escapes in it (its JSON form would be rewritten by serialisation), logprobs, an index that is not plain digits.
 * Keys are found by their last occurrence, as JSON.parse keeps a repeated key's last value; a key with its quotes
 * can only be a key, since quotes inside strings are escaped. An event with an object nested in it (a `{` anywhere
 * but its first character and its delta's text) is parsed: a nested object could hold keys of the same names.
 */

export interface TextDeltaFields {
  /** The delta's text; it has no escapes, so its JSON string is `"` + delta + `"`. */
  readonly delta: string;
  /** -1 when absent (as the translator reads a parsed event). */
  readonly outputIndex: number;
  /** 0 when absent. */
  readonly contentIndex: number;
}

const DELTA_KEY = '"delta":"';

export function readTextDelta(data: string): TextDeltaFields | null {
  const at = data.lastIndexOf(DELTA_KEY);
  if (at < 0) return null;
  const start = at + DELTA_KEY.length;
  let end = start;
  for (; end < data.length; end++) {
    const c = data.charCodeAt(end);
    if (c === 34) break;
    // An escape (its serialised form may differ from the upstream's) or a raw control character (not JSON at all:
    // parsing fails the stream, as it must).
    if (c === 92 || c < 0x20) return null;
    // A lone surrogate is escaped by serialisation; a pair is kept as it is.
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = data.charCodeAt(end + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return null;
      end++;
    }
  }
  if (end >= data.length || !endsValue(data, end + 1)) return null;
  const brace = data.indexOf("{", 1);
  if (brace !== -1 && (brace < start || data.indexOf("{", end) !== -1)) return null;
  if (!noLogprobs(data)) return null;
  const outputIndex = indexField(data, '"output_index":', -1);
  const contentIndex = indexField(data, '"content_index":', 0);
  if (outputIndex === null || contentIndex === null) return null;
  return { delta: data.slice(start, end), outputIndex, contentIndex };
}

/** A value ends where the object goes on (`,`) or closes (`}`): anything else (spaces included) is left to JSON.parse. */
function endsValue(data: string, at: number): boolean {
  const c = data.charCodeAt(at);
  return c === 44 || c === 125;
}

/** Absent, `[]` or `null`: the logprobs the fast path may ignore. */
function noLogprobs(data: string): boolean {
  const key = '"logprobs":';
  const at = data.lastIndexOf(key);
  if (at < 0) return true;
  const v = at + key.length;
  if (data.startsWith("[]", v)) return endsValue(data, v + 2);
  if (data.startsWith("null", v)) return endsValue(data, v + 4);
  return false;
}

/** A non-negative integer field (plain digits), `absent` when the key is not there, null when it is not plain. */
function indexField(data: string, key: string, absent: number): number | null {
  const at = data.lastIndexOf(key);
  if (at < 0) return absent;
  let i = at + key.length;
  const from = i;
  let n = 0;
  for (; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  // Digits only, no leading zero (not JSON), short enough to be exact.
  if (i === from || i - from > 9 || (data.charCodeAt(from) === 48 && i - from > 1) || !endsValue(data, i)) return null;
  return n;
}
