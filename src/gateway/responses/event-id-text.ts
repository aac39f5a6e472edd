/**
 * The id an event that carries the response or an item introduces, read off its JSON text instead of parsing it (a
 * kept stream used to parse every such event only to learn that id). Only the plain case is read: the text holds
 * one `"id"` in all, and it is the first key of the top-level `"response"` or `"item"` object, its value a string
 * without escapes; anything else (no id, nested ids, an output already in the response, odd spacing) returns null
 * and the event is parsed as before. With one `"id"` in the text there is no other id the parsed event could
 * introduce (a response's output items, a nested object's), so reading it this way learns exactly what parsing does.
 */

export interface IdInText {
  id: string;
  /** The id is the response's (`"response":{"id":…`), else an item's (`"item":{"id":…`). */
  response: boolean;
}

/** How far into the text the id may be: its object opens after the type, sequence number and output index. */
const MAX_PREFIX = 1024;
const MAX_ID = 200;

/** `response`: the event is one of the response's own (created, in progress), else an output item's. */
export function idInEventText(text: string, response: boolean): IdInText | null {
  const at = text.indexOf('"id"');
  if (at < 0 || at > MAX_PREFIX || text.indexOf('"id"', at + 4) >= 0) return null;
  const key = response ? '"response":{' : '"item":{';
  if (!text.startsWith(key, at - key.length) || !text.startsWith(':"', at + 4)) return null;
  // An item event that also has a `response` is rewritten as a response event would be: the parsed path decides.
  if (!response && text.includes('"response"')) return null;
  if (depthAt(text, at) !== 2) return null;
  const start = at + 6;
  const end = text.indexOf('"', start);
  if (end <= start || end - start > MAX_ID) return null;
  const id = text.slice(start, end);
  return id.includes("\\") ? null : { id, response };
}

/** How deep in objects and arrays position `end` of a JSON text is (strings skipped, escapes honoured). */
function depthAt(text: string, end: number): number {
  let depth = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < end && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
  }
  return depth;
}
