/**
 * Text built by appending small pieces, as a stream's text is from its deltas. Each `+` makes a rope node (tens of
 * bytes) over a piece of a few, so a long reply's text, kept as it grew, cost several times its size (every
 * stream held its own until it ended, a stalled one until it was cut). `appendText` makes the text flat (one
 * buffer) each time it has grown by a step: 4 KiB while it is short, an eighth of its size after that, so the nodes
 * held stay few and the copies add up to a few times the text, never its square.
 */

const MIN_STEP = 4096;

/** Written so that the read that flattens a text is not dropped as unused by the optimising compiler (measured). */
let flattened = 0;

export function appendText(text: string, piece: string): string {
  const next = text + piece;
  const step = Math.max(MIN_STEP, (1 << (31 - Math.clz32(text.length))) >>> 3);
  // Reading a character resolves the rope into one buffer and lets its nodes go.
  if (Math.floor(text.length / step) !== Math.floor(next.length / step)) flattened = next.charCodeAt(0);
  return next;
}

