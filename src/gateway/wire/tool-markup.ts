/**
 * Upstream models sometimes write tool calls as XML-like text (`<tool_use>{…}</tool_use>`,
 * `<function_calls><invoke …>`) instead of making a real function call. This removes that markup from the
 * text and, when it names a tool the request offered with parseable arguments, hands back a call instead.
 *
 * Streaming first: the whole-text `cleanToolMarkup` is push+flush on one cleaner, so the two cannot disagree.
 * Every decision depends only on the text itself (never on where the chunks were cut), which is what makes
 * "any split gives the same output" hold.
 */

import { BLOCK_TAGS, attributesOf, callsFromBlock, findClose, isSpace } from "./tool-markup-tags";

export type MarkupPiece = { type: "text"; text: string } | { type: "call"; name: string; arguments: string /* JSON text */ };

export interface ToolMarkupCleaner {
  push(text: string): MarkupPiece[];
  flush(): MarkupPiece[];
}

const BLOCK_TAG_SET = new Set(BLOCK_TAGS);
/** A block that has not closed within this many characters of its `<` is prose (or runaway output): released. */
export const MAX_BLOCK_CHARS = 32 * 1024;
/** An opening tag with attributes longer than this is not one of ours; bounds how long a `<` is held. */
const MAX_OPEN_TAG_CHARS = 256;

type Scan = { kind: "no" } | { kind: "more" } | { kind: "open"; name: string; end: number };
const NO: Scan = { kind: "no" };
const MORE: Scan = { kind: "more" };

function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 58;
}

/**
 * Is there one of our opening tags at `lt`? "more" means the text ends while it still could be.
 * A `<` right after a backtick is inline code (`` `<tool_use>` ``): an example, never a call.
 */
function scanOpenTag(data: string, lt: number, prev: string): Scan {
  if (prev === "`") return NO;
  let j = lt + 1;
  while (j < data.length && isNameChar(data.charCodeAt(j))) j++;
  const name = data.slice(lt + 1, j);
  if (j === data.length) return BLOCK_TAGS.some((t) => t.startsWith(name)) ? MORE : NO;
  if (!BLOCK_TAG_SET.has(name)) return NO;
  const c = data.charCodeAt(j);
  if (c === 62 /* > */) return { kind: "open", name, end: j + 1 };
  if (!isSpace(c) || c === 10) return NO;
  // Attributes: stop at a newline or another `<` so a stray "<tool_call or so" in prose is let go quickly.
  const limit = lt + MAX_OPEN_TAG_CHARS;
  for (let k = j + 1; k < data.length; k++) {
    if (k >= limit) return NO;
    const d = data.charCodeAt(k);
    if (d === 62) return data.charCodeAt(k - 1) === 47 /* self-closing: nothing inside */ ? NO : { kind: "open", name, end: k + 1 };
    if (d === 60 || d === 10) return NO;
  }
  return data.length >= limit ? NO : MORE;
}

export function createToolMarkupCleaner(options: { toolNames: ReadonlySet<string> }): ToolMarkupCleaner {
  const { toolNames } = options;
  // Withheld input; when non-empty it starts with the `<` under consideration.
  let held = "";
  // The input character just before `held` (or before the next push when nothing is held).
  let before = "";
  // Set once `held` starts with a complete opening tag of ours.
  let tag = "";
  let bodyStart = 0;
  let inBody = false;
  let resumeAt = 0;
  let depth = 0;

  function reset(): void {
    tag = "";
    inBody = false;
    depth = 0;
  }

  function emitText(out: MarkupPiece[], text: string): void {
    if (text === "") return;
    const last = out[out.length - 1];
    if (last !== undefined && last.type === "text") last.text += text;
    else out.push({ type: "text", text });
  }

  /** `final`: no more text will come, so nothing is held: what could still have become markup is text. */
  function run(data: string, out: MarkupPiece[], final = false): void {
    let emitFrom = 0;
    let i = 0;
    let blockStart = 0; // where `tag`'s `<` is in `data`; held blocks always start at 0
    const hold = (at: number): void => {
      emitText(out, data.slice(emitFrom, at));
      if (at > 0) before = data[at - 1];
      held = data.slice(at);
      if (at > 0 && tag !== "") {
        bodyStart -= at;
        resumeAt -= at;
      }
    };

    for (;;) {
      if (tag === "") {
        const lt = data.indexOf("<", i);
        if (lt === -1) {
          emitText(out, data.slice(emitFrom));
          if (data.length > 0) before = data[data.length - 1];
          held = "";
          return;
        }
        const s = scanOpenTag(data, lt, lt > 0 ? data[lt - 1] : before);
        if (s.kind === "more" && !final) return hold(lt);
        if (s.kind !== "open") {
          i = lt + 1;
          continue;
        }
        tag = s.name;
        blockStart = lt;
        bodyStart = resumeAt = s.end;
        inBody = false;
        depth = 0;
      }

      const limit = blockStart + MAX_BLOCK_CHARS;
      if (!inBody) {
        // Markup has structure right after the tag; prose ("a <tool_call> tag") does not, and goes at once.
        let k = resumeAt;
        while (k < data.length && isSpace(data.charCodeAt(k))) k++;
        if (k >= limit) {
          reset();
          i = blockStart + 1;
          continue;
        }
        if (k === data.length && !final) {
          resumeAt = k;
          return hold(blockStart);
        }
        const c = data[k];
        if (k === data.length || (c !== "{" && c !== "[" && c !== "<")) {
          reset();
          i = blockStart + 1;
          continue;
        }
        inBody = true;
        resumeAt = k;
      }

      const r = findClose(data, resumeAt, tag, depth, limit);
      if (r.kind === "more" && final) {
        // Never closed: the opening tag is text, and what follows it is scanned again for blocks of its own.
        reset();
        i = blockStart + 1;
        continue;
      }
      if (r.kind === "more") {
        resumeAt = r.from;
        depth = r.depth;
        return hold(blockStart);
      }
      if (r.kind === "overflow") {
        // Unclosed within the cap: the block is text. Resume after the cap, not at blockStart+1, so a run of
        // opening tags cannot make the scan quadratic.
        reset();
        i = limit;
        continue;
      }
      const inner = data.slice(bodyStart, r.start);
      // `<tool_call></tool_call>` carries nothing to act on; more likely a mention than markup.
      if (inner.trim() !== "") {
        emitText(out, data.slice(emitFrom, blockStart));
        const openTag = data.slice(blockStart, bodyStart);
        for (const call of callsFromBlock(attributesOf(openTag), inner)) {
          if (typeof call.name === "string" && toolNames.has(call.name) && call.args !== null) {
            out.push({ type: "call", name: call.name, arguments: JSON.stringify(call.args) });
          }
        }
        emitFrom = r.end;
      }
      reset();
      i = r.end;
    }
  }

  return {
    push(text: string): MarkupPiece[] {
      if (held === "") {
        // The common case: no `<`, nothing withheld. Hand the same string straight back.
        if (text.indexOf("<") === -1) {
          if (text === "") return [];
          before = text[text.length - 1];
          return [{ type: "text", text }];
        }
        const out: MarkupPiece[] = [];
        run(text, out);
        return out;
      }
      if (text === "") return [];
      const out: MarkupPiece[] = [];
      run(held + text, out);
      return out;
    },
    flush(): MarkupPiece[] {
      // What is still withheld starts with a block that never closed (or a tag that never completed): that is
      // text, but complete blocks inside it are still markup, so it is scanned once more with nothing to wait for.
      const out: MarkupPiece[] = [];
      const data = held;
      held = "";
      reset();
      if (data !== "") run(data, out, true);
      return out;
    },
  };
}

export function cleanToolMarkup(
  text: string,
  toolNames: ReadonlySet<string>,
): { text: string; calls: Array<{ name: string; arguments: string }> } {
  const cleaner = createToolMarkupCleaner({ toolNames });
  let out = "";
  const calls: Array<{ name: string; arguments: string }> = [];
  for (const piece of [...cleaner.push(text), ...cleaner.flush()]) {
    if (piece.type === "text") out += piece.text;
    else calls.push({ name: piece.name, arguments: piece.arguments });
  }
  return { text: out, calls };
}

/** Names of the function tools a request defines: markup naming one of them becomes a real call. */
export function functionToolNames(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (!Array.isArray(tools)) return names;
  for (const t of tools) {
    if (t && typeof t === "object") {
      const name = (t as any).name ?? (t as any).function?.name;
      if (typeof name === "string") names.add(name);
    }
  }
  return names;
}
