/**
 * Upstream models sometimes write tool calls as XML-like text (`<tool_use>{…}</tool_use>`,
 * `<function_calls><invoke …>`) instead of making a real function call. This removes that markup from the
 * text and, when it names a tool the request offered with parseable arguments, hands back a call instead.
 *
 * Streaming first: the whole-text `cleanToolMarkup` is push+flush on one cleaner, so the two cannot disagree.
 * Every decision depends only on the text itself (never on where the chunks were cut), which is what makes
 * "any split gives the same output" hold.
 */

export type MarkupPiece = { type: "text"; text: string } | { type: "call"; name: string; arguments: string /* JSON text */ };

export interface ToolMarkupCleaner {
  push(text: string): MarkupPiece[];
  flush(): MarkupPiece[];
}

/** Wrapper tags we treat as tool markup when they open at top level of the text. */
const BLOCK_TAGS = ["tool_use", "tool_call", "tool_calls", "function_call", "function_calls"];
const BLOCK_TAG_SET = new Set(BLOCK_TAGS);
/** A block that has not closed within this many characters of its `<` is prose (or runaway output): released. */
export const MAX_BLOCK_CHARS = 32 * 1024;
/** An opening tag with attributes longer than this is not one of ours; bounds how long a `<` is held. */
const MAX_OPEN_TAG_CHARS = 256;

// Child elements of the `<tool_use><name>…</name><arguments>…</arguments></tool_use>` family.
const NAME_TAGS = new Set(["name", "tool_name", "function_name"]);
const ARG_TAGS = new Set(["arguments", "parameters", "input", "args"]);
// Elements that carry one call each, nested inside a wrapper (`<function_calls><invoke name=…>`).
const CALL_TAGS = new Set(["invoke", "tool", ...BLOCK_TAGS]);

type Scan = { kind: "no" } | { kind: "more" } | { kind: "open"; name: string; end: number };
const NO: Scan = { kind: "no" };
const MORE: Scan = { kind: "more" };

function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 58;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 12;
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

type Close = { kind: "found"; start: number; end: number } | { kind: "more"; from: number; depth: number } | { kind: "overflow" };

/**
 * Looks for the `</name>` that closes a block, counting nested `<name …>` of the same name, searching no
 * further than `limit`. Resumable: "more" says where to pick up once more text has arrived.
 */
function findClose(data: string, from: number, name: string, depth: number, limit: number): Close {
  const end = Math.min(data.length, limit);
  const capped = data.length >= limit;
  const openLit = "<" + name;
  const closeLit = "</" + name + ">";
  // Text ran out (or hit the cap) at `at` while what is there could still become a tag.
  const stop = (at: number): Close => (capped ? { kind: "overflow" } : { kind: "more", from: at, depth });
  let j = from;
  for (;;) {
    const lt = data.indexOf("<", j);
    if (lt === -1 || lt >= end) return stop(end);
    const rest = end - lt;
    if (rest < closeLit.length) {
      if (closeLit.startsWith(data.slice(lt, end))) return stop(lt);
    } else if (data.startsWith(closeLit, lt)) {
      if (depth === 0) return { kind: "found", start: lt, end: lt + closeLit.length };
      depth--;
      j = lt + closeLit.length;
      continue;
    }
    // A nested opening tag of the same name needs one character past the name to be told from e.g. `<tool_calls`.
    if (rest <= openLit.length) {
      if (openLit.startsWith(data.slice(lt, end))) return stop(lt);
    } else if (data.startsWith(openLit, lt)) {
      const c = data.charCodeAt(lt + openLit.length);
      if (c === 62 || isSpace(c)) depth++;
    }
    j = lt + 1;
  }
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

// ---- Reading the inside of a block -------------------------------------------------------------------

/** `args: null` = present but unusable; the call is then dropped. */
interface Candidate {
  name: unknown;
  args: Record<string, unknown> | null;
}

interface Element {
  tag: string;
  attrs: Record<string, string>;
  inner: string;
}

const ELEMENT_OPEN = /<([A-Za-z_][\w.:-]*)(\s[^<>]*?)?(\/)?>/y;
const ATTRIBUTE = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attributesOf(openTag: string): Record<string, string> {
  // Null prototype: a key like "__proto__" from model output must stay an ordinary key.
  const attrs: Record<string, string> = Object.create(null);
  for (const m of openTag.matchAll(ATTRIBUTE)) attrs[m[1]] = m[2] ?? m[3];
  return attrs;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Top-level elements of an XML-ish fragment; stray text between them and unclosed elements are skipped. */
function parseElements(s: string): Element[] {
  const out: Element[] = [];
  let i = 0;
  while (i < s.length) {
    const lt = s.indexOf("<", i);
    if (lt === -1) break;
    ELEMENT_OPEN.lastIndex = lt;
    const m = ELEMENT_OPEN.exec(s);
    if (!m) {
      i = lt + 1;
      continue;
    }
    const tag = m[1];
    const openEnd = lt + m[0].length;
    const attrs = attributesOf(m[2] ?? "");
    if (m[3]) {
      out.push({ tag, attrs, inner: "" });
      i = openEnd;
      continue;
    }
    const close = findClose(s, openEnd, tag, 0, Number.MAX_SAFE_INTEGER);
    if (close.kind !== "found") {
      i = openEnd;
      continue;
    }
    out.push({ tag, attrs, inner: s.slice(openEnd, close.start) });
    i = close.end;
  }
  return out;
}

function callsFromBlock(attrs: Record<string, string>, inner: string): Candidate[] {
  const named = attrs.name ?? attrs.tool_name;
  if (named !== undefined) return [{ name: named, args: argsFromText(inner) }];
  const t = inner.trim();
  if (t.startsWith("{") || t.startsWith("[")) return callsFromJsonText(t);
  return callsFromElements(parseElements(t));
}

function callsFromElements(elements: Element[]): Candidate[] {
  const calls: Candidate[] = [];
  let name: string | undefined;
  let args: Record<string, unknown> | null | undefined;
  for (const el of elements) {
    if (CALL_TAGS.has(el.tag)) calls.push(...callsFromBlock(el.attrs, el.inner));
    else if (NAME_TAGS.has(el.tag)) name ??= el.inner.trim();
    else if (ARG_TAGS.has(el.tag) && args === undefined) args = argsFromText(el.inner);
  }
  if (name !== undefined) calls.push({ name, args: args === undefined ? {} : args });
  return calls;
}

function callsFromJsonText(text: string): Candidate[] {
  const parsed = tryJson(text);
  if (!parsed.ok) return [];
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return list.map(callFromJson);
}

function callFromJson(v: unknown): Candidate {
  if (!isPlainObject(v)) return { name: undefined, args: null };
  const fn = isPlainObject(v.function) ? v.function : undefined;
  const name = v.name ?? v.tool_name ?? fn?.name ?? v.tool;
  const raw = v.arguments ?? v.parameters ?? v.input ?? v.args ?? fn?.arguments ?? fn?.parameters;
  return { name, args: normaliseArgs(raw) };
}

/** Arguments must end up a JSON object: given as one, as JSON text of one, or absent (a tool without parameters). */
function normaliseArgs(raw: unknown): Record<string, unknown> | null {
  if (raw === undefined || raw === null) return {};
  if (isPlainObject(raw)) return raw;
  if (typeof raw !== "string") return null;
  if (raw.trim() === "") return {};
  const parsed = tryJson(raw);
  return parsed.ok && isPlainObject(parsed.value) ? parsed.value : null;
}

/** The body of an arguments element or of `<invoke>`: JSON, `<parameter name=…>` children, or `<key>value</key>` children. */
function argsFromText(inner: string): Record<string, unknown> | null {
  const t = inner.trim();
  if (t === "") return {};
  if (t.startsWith("{")) return normaliseArgs(t);
  if (!t.startsWith("<")) return null;
  const elements = parseElements(t);
  if (elements.length === 0) return null;
  const args: Record<string, unknown> = Object.create(null);
  for (const el of elements) {
    const key = el.tag === "parameter" || el.tag === "param" || el.tag === "argument" ? el.attrs.name : el.tag;
    if (key === undefined) return null;
    args[key] = parameterValue(el.inner);
  }
  return args;
}

/**
 * The usual convention for XML parameters: strings appear as-is, anything else as JSON. So "42" is a
 * number and "Paris" a string; a parameter that is a string of digits cannot be told apart.
 */
function parameterValue(inner: string): unknown {
  const t = inner.trim();
  if (t === "") return "";
  const c = t[0];
  if (c === "{" || c === "[" || c === "-" || (c >= "0" && c <= "9") || t === "true" || t === "false" || t === "null") {
    const parsed = tryJson(t);
    if (parsed.ok) return parsed.value;
  }
  return t;
}
