import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { cleanToolMarkup, createToolMarkupCleaner, type MarkupPiece } from "../../src/gateway/wire/tool-markup";
import { cutPoints, runs, splitAt } from "./arbitraries";

const TOOLS = new Set(["get_weather", "search"]);
const BLOCK_TAGS = ["tool_use", "tool_call", "tool_calls", "function_call", "function_calls"];

// ---- text: prose mixed with pieces of tool markup ---------------------------------------------------------

const fragment = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      ...BLOCK_TAGS.flatMap((t) => [`<${t}>`, `</${t}>`]),
      "<tool_call name=\"get_weather\">",
      "<tool_use id=\"1\">",
      "<invoke name=\"get_weather\">",
      "</invoke>",
      "<parameter name=\"city\">",
      "</parameter>",
      "<name>",
      "</name>",
      "<arguments>",
      "</arguments>",
      "<tool_name>search</tool_name>",
      '{"name":"get_weather","arguments":{"city":"Paris"}}',
      '{"name":"search","arguments":"{\\"q\\":1}"}',
      '[{"name":"search"}]',
      "{",
      "}",
      "[",
      "Paris",
      "get_weather",
      "`",
      "<",
      ">",
      "/>",
      "</",
      "<tool_",
      "use>",
      "_call",
      "<tool_call ",
      "<tool_use\n>",
      "<function_calls\t>",
      "<tool_calls />",
      '<tool_call />{"name":"search"}</tool_call>',
      "\n",
      " ",
    ),
  },
  { weight: 3, arbitrary: fc.constantFrom("Hello", "the ", "a < b", "x>y", "é", "👋", "1 <2", "<b>bold</b>", "<tool_useX>") },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const body = fc.constantFrom(
  '{"name":"get_weather","arguments":{"city":"Paris"}}',
  '{"name":"search"}',
  '{"name":"delete_all","arguments":{}}',
  '[{"name":"search","arguments":"{}"}]',
  "<name>search</name><arguments>{}</arguments>",
  '<invoke name="get_weather"><parameter name="city">Paris</parameter></invoke>',
  "{}",
  "[",
  "\n  {",
  "",
);
/** A complete block (maybe nested in another), so texts hold real markup often, not only by chance. */
const block: fc.Arbitrary<string> = fc.letrec<{ block: string }>((tie) => ({
  block: fc
    .tuple(
      fc.constantFrom(...BLOCK_TAGS),
      fc.constantFrom("", ' name="search"', ' id="x"'),
      fc.array(fc.oneof({ weight: 3, arbitrary: body }, { weight: 1, arbitrary: tie("block") }, { weight: 1, arbitrary: fragment }), { maxLength: 3, depthIdentifier: "block" }),
    )
    .map(([tag, attrs, inner]) => `<${tag}${attrs}>${inner.join("")}</${tag}>`),
})).block;
/** Any mix of markup pieces: split tags, stray tags, mismatched nesting, prose. */
const markupText = fc
  .array(fc.oneof({ weight: 5, arbitrary: fragment }, { weight: 2, arbitrary: block }), { maxLength: 20 })
  .map((fs) => fs.join(""));

/** Prose that cannot join with anything around it into a tag. */
const prose = fc.constantFrom("Hello ", "the ", "a < b ", "x>y", "é", "👋", "<b>bold</b>", "{", "}", "\n", " ", "`<tool_use>{}</tool_use>` ", "<tool_call> tag ");
/** A block whose inside is made of bodies and further well-formed blocks only. */
const wellFormedBlock: fc.Arbitrary<string> = fc.letrec<{ block: string }>((tie) => ({
  block: fc
    .tuple(
      fc.constantFrom(...BLOCK_TAGS),
      fc.constantFrom("", ' name="search"'),
      fc.array(fc.oneof({ weight: 3, arbitrary: body }, { weight: 1, arbitrary: tie("block") }), { maxLength: 3, depthIdentifier: "wf" }),
    )
    .map(([tag, attrs, inner]) => `<${tag}${attrs}>${inner.join("")}</${tag}>`),
})).block;
/**
 * Prose, complete blocks, and opening tags that never close (a model that forgot the closing tag), in any
 * order. Unlike `markupText`, no piece is a fragment of a tag, so removing a block can never join the text
 * around it into a new tag (see the note on reassembly below).
 */
const wellFormedPieces = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: prose.map((text) => ({ text, kept: true })) },
    // A block goes, unless there is nothing inside it (`<tool_call></tool_call>` is a mention, not a call).
    { weight: 3, arbitrary: wellFormedBlock.map((text) => ({ text, kept: text.replace(/^<[^>]*>|<[^>]*>$/g, "").trim() === "" })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...BLOCK_TAGS)
        .chain((t) => fc.constantFrom(`<${t}>{`, `<${t}>[`, `<${t}>\n<`, `<${t}> `))
        .map((text) => ({ text, kept: true })),
    },
  ),
  { maxLength: 14 },
);
const wellFormedText = wellFormedPieces.map((ps) => ps.map((p) => p.text).join(""));
/** Text with no `<` at all, including astral characters and every other tag character. */
const plainText = fc.string({ unit: fc.oneof(fc.constantFrom(">", "/", "{", "}", "`", "\n", "é", "👋", " "), fc.string({ minLength: 1, maxLength: 1 })), maxLength: 30 }).map((s) => s.replaceAll("<", ""));

/** Any code point (lone surrogates too), mixed with the characters and names the cleaner looks at. */
const anyChar = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\uD800", "\uDC00") },
  { weight: 2, arbitrary: fc.constantFrom("<", "</", ">", "tool_use", "tool_call", "function_calls", "{", "[", "`", " ", "\n") },
);

function merged(pieces: MarkupPiece[]): MarkupPiece[] {
  const out: MarkupPiece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (p.type === "text" && p.text === "") continue;
    if (p.type === "text" && last?.type === "text") out[out.length - 1] = { type: "text", text: last.text + p.text };
    else out.push({ ...p });
  }
  return out;
}

function streamed(chunks: string[]): MarkupPiece[] {
  const c = createToolMarkupCleaner({ toolNames: TOOLS });
  const out: MarkupPiece[] = [];
  for (const ch of chunks) out.push(...c.push(ch));
  out.push(...c.flush());
  return merged(out);
}

/**
 * An independent reading of "a complete recognised block": one of the wrapper tags (not right after a
 * backtick), optional attributes on one line, a body that starts (after whitespace) with `{`, `[` or `<` and is
 * not blank, and the matching close tag with nested same-name tags balanced.
 */
function findCompleteBlock(text: string): string | null {
  const open = /<(tool_use|tool_calls|tool_call|function_calls|function_call)(?=[ \n\r\t\f>])([ \t\r\f][^<>\n]*)?>/g;
  for (const m of text.matchAll(open)) {
    const start = m.index!;
    if (start > 0 && text[start - 1] === "`") continue;
    if (m[0].endsWith("/>")) continue;
    const name = m[1];
    const bodyStart = start + m[0].length;
    if (!/^[ \n\r\t\f]*[{[<]/.test(text.slice(bodyStart))) continue;
    // Walk same-name open and close tags to the balancing close.
    const tags = new RegExp(`<${name}(?=[ \\n\\r\\t\\f>])|</${name}>`, "g");
    tags.lastIndex = bodyStart;
    let depth = 0;
    for (let t = tags.exec(text); t; t = tags.exec(text)) {
      if (t[0].startsWith("</")) {
        if (depth === 0) {
          if (text.slice(bodyStart, t.index).trim() !== "") return text.slice(start, t.index + t[0].length);
          break;
        }
        depth--;
      } else depth++;
    }
  }
  return null;
}

describe("tool-markup cleaner", () => {
  test("streaming gives the same pieces as the whole text, for any chunking", () => {
    fc.assert(
      fc.property(fc.oneof(markupText, wellFormedText), fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
        expect(streamed(splitAt(text, cutPoints(text.length, cuts)))).toEqual(streamed([text]));
      }),
      runs(600),
    );
  });

  test("one character per chunk gives the same pieces as the whole text", () => {
    fc.assert(
      fc.property(markupText, (text) => {
        expect(streamed(text.split(""))).toEqual(streamed([text]));
      }),
      runs(200),
    );
  });

  // Reassembly, a known limit: removing a block can join the text around it into a new block, e.g.
  // `<tool_<tool_use>{}</tool_use>use>{"a":1}</tool_use>` cleans to `<tool_use>{"a":1}</tool_use>`, and a
  // removed block can hold the nested tag that kept an enclosing one unbalanced. The text before a block has
  // already been sent when the block is recognised, so a streaming cleaner cannot undo that. Only model output
  // built to do it produces it; these two properties therefore use texts whose pieces are whole tags.
  test("cleaned text never contains a complete recognised tool block", () => {
    fc.assert(
      fc.property(wellFormedText, (text) => {
        const cleaned = cleanToolMarkup(text, TOOLS).text;
        expect(findCompleteBlock(cleaned)).toBeNull();
      }),
      runs(800),
    );
  });

  test("cleaning is idempotent: cleaned text cleans to itself, with no calls", () => {
    fc.assert(
      fc.property(wellFormedText, (text) => {
        const once = cleanToolMarkup(text, TOOLS);
        expect(cleanToolMarkup(once.text, TOOLS)).toEqual({ text: once.text, calls: [] });
      }),
      runs(600),
    );
  });

  test("well-formed text: exactly the blocks go, everything else stays as it was", () => {
    fc.assert(
      fc.property(wellFormedPieces, (pieces) => {
        const text = pieces.map((p) => p.text).join("");
        const want = pieces.filter((p) => p.kept).map((p) => p.text).join("");
        expect(cleanToolMarkup(text, TOOLS).text).toBe(want);
      }),
      runs(600),
    );
  });

  test("text holding no complete recognised block comes out unchanged, with no calls", () => {
    fc.assert(
      fc.property(markupText, (text) => {
        if (findCompleteBlock(text) !== null) return;
        expect(cleanToolMarkup(text, TOOLS)).toEqual({ text, calls: [] });
      }),
      runs(600),
    );
  });

  test("cleaning only removes: the cleaned text is the input with whole spans taken out, in order", () => {
    fc.assert(
      fc.property(markupText, (text) => {
        const c = createToolMarkupCleaner({ toolNames: TOOLS });
        const pieces = [...c.push(text), ...c.flush()];
        // The text that went out is a subsequence of the input (characters in order, some spans left out).
        const cleaned = pieces.map((p) => (p.type === "text" ? p.text : "")).join("");
        let at = 0;
        for (const ch of cleaned) {
          at = text.indexOf(ch, at);
          expect(at).toBeGreaterThanOrEqual(0);
          at += ch.length;
        }
        // Calls name an offered tool and carry a JSON object.
        for (const p of pieces) {
          if (p.type !== "call") continue;
          expect(TOOLS.has(p.name)).toBe(true);
          const args = JSON.parse(p.arguments);
          expect(args !== null && typeof args === "object" && !Array.isArray(args)).toBe(true);
        }
      }),
      runs(600),
    );
  });

  test("text without '<' passes through unchanged and at once, chunk by chunk", () => {
    fc.assert(
      fc.property(fc.array(plainText, { maxLength: 6 }), markupText, (chunks, before) => {
        const c = createToolMarkupCleaner({ toolNames: TOOLS });
        // Whatever came before, once nothing is withheld, '<'-free text goes straight out.
        c.push(before);
        c.flush();
        for (const ch of chunks) expect(c.push(ch)).toEqual(ch === "" ? [] : [{ type: "text", text: ch }]);
        expect(c.flush()).toEqual([]);
      }),
      runs(400),
    );
  });

  test("arbitrary strings never throw, and with no markup tag the text is unchanged", () => {
    fc.assert(
      fc.property(fc.string({ unit: anyChar, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        const whole = cleanToolMarkup(text, TOOLS);
        expect(streamed(splitAt(text, cutPoints(text.length, cuts)))).toEqual(streamed([text]));
        if (!BLOCK_TAGS.some((t) => text.includes(`<${t}`))) expect(whole).toEqual({ text, calls: [] });
      }),
      runs(400),
    );
  });
});
