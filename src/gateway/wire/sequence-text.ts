/**
 * The `sequence_number` of an event read off its JSON text, for a stream forwarded unparsed: a failure event built
 * later must take the number after the last one the caller got, and an unparsed event only says it follows the
 * previous one. Read once, for the first numbered event; -1 when the text has none.
 */
const KEY = '"sequence_number":';

export function sequenceInText(data: string): number {
  const at = data.indexOf(KEY);
  if (at < 0) return -1;
  let i = at + KEY.length;
  while (data.charCodeAt(i) === 32) i++;
  let n = 0;
  const start = i;
  for (let c = data.charCodeAt(i); c >= 48 && c <= 57; c = data.charCodeAt(++i)) n = n * 10 + (c - 48);
  return i > start && i - start <= 15 ? n : -1;
}
