/**
 * Tag-level reading of tool markup, for the streaming cleaner in tool-markup.ts: finding the tag that closes a
 * block, and reading the inside of a block (`<tool_use>…</tool_use>`, `<function_calls><invoke …>`) into the
 * calls it names, whatever dialect the model wrote. Pure; the cleaner decides where blocks are and what to do
 * with the calls.
 */

/** Wrapper tags we treat as tool markup when they open at top level of the text. */
export const BLOCK_TAGS = ["tool_use", "tool_call", "tool_calls", "function_call", "function_calls"];

export function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 12;
}

export type Close = { kind: "found"; start: number; end: number } | { kind: "more"; from: number; depth: number } | { kind: "overflow" };

/**
 * Looks for the `</name>` that closes a block, counting nested `<name …>` of the same name, searching no
 * further than `limit`. Resumable: "more" says where to pick up once more text has arrived.
 */
export function findClose(data: string, from: number, name: string, depth: number, limit: number): Close {
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

// Child elements of the `<tool_use><name>…</name><arguments>…</arguments></tool_use>` family.
const NAME_TAGS = new Set(["name", "tool_name", "function_name"]);
const ARG_TAGS = new Set(["arguments", "parameters", "input", "args"]);
// Elements that carry one call each, nested inside a wrapper (`<function_calls><invoke name=…>`).
const CALL_TAGS = new Set(["invoke", "tool", ...BLOCK_TAGS]);

/** `args: null` = present but unusable; the call is then dropped. */
export interface Candidate {
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

export function attributesOf(openTag: string): Record<string, string> {
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

export function callsFromBlock(attrs: Record<string, string>, inner: string): Candidate[] {
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
