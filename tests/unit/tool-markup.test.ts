import { describe, expect, test } from "bun:test";
import { MAX_BLOCK_CHARS, cleanToolMarkup, createToolMarkupCleaner, type MarkupPiece } from "../../src/gateway/wire/tool-markup";

const TOOLS = new Set(["get_weather", "search"]);
const PARIS = JSON.stringify({ city: "Paris" });

/** Feeds the chunks through one cleaner and joins adjacent text pieces, so outputs of any split compare equal. */
function streamed(chunks: string[], tools: ReadonlySet<string> = TOOLS): MarkupPiece[] {
  const cleaner = createToolMarkupCleaner({ toolNames: tools });
  const all: MarkupPiece[] = [];
  for (const chunk of chunks) all.push(...cleaner.push(chunk));
  all.push(...cleaner.flush());
  return merged(all);
}

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

const call = (name: string, args: unknown): MarkupPiece => ({ type: "call", name, arguments: JSON.stringify(args) });
const text = (t: string): MarkupPiece => ({ type: "text", text: t });

const VARIANTS: Array<[string, string]> = [
  ["tool_use JSON", `<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>`],
  ["tool_call JSON with string arguments", `<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}</tool_call>`],
  ["tool_call with whitespace around JSON", `<tool_call>\n  {"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>`],
  ["function_call JSON with parameters", `<function_call>{"name":"get_weather","parameters":{"city":"Paris"}}</function_call>`],
  ["function_call JSON in OpenAI shape", `<function_call>{"function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}</function_call>`],
  [
    "function_calls / invoke / parameter",
    `<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n</function_calls>`,
  ],
  ["tool_use with name + arguments children", `<tool_use><name>get_weather</name><arguments>{"city":"Paris"}</arguments></tool_use>`],
  ["tool_use with tool_name + parameters children", `<tool_use>\n<tool_name>get_weather</tool_name>\n<parameters>{"city": "Paris"}</parameters>\n</tool_use>`],
  ["parameters as child elements", `<tool_use><tool_name>get_weather</tool_name><parameters><city>Paris</city></parameters></tool_use>`],
  ["name attribute on the wrapper", `<tool_call name="get_weather">{"city":"Paris"}</tool_call>`],
];

describe("tag variants", () => {
  for (const [label, markup] of VARIANTS) {
    test(`${label}: removed and turned into a call, text around kept in order`, () => {
      const input = `Let me check. ${markup} Done.`;
      expect(streamed([input])).toEqual([text("Let me check. "), call("get_weather", { city: "Paris" }), text(" Done.")]);
      expect(cleanToolMarkup(input, TOOLS)).toEqual({
        text: "Let me check.  Done.",
        calls: [{ name: "get_weather", arguments: PARIS }],
      });
    });

    test(`${label}: the same result for a split at every position and for one character at a time`, () => {
      const input = `A ${markup} B`;
      const expected = [text("A "), call("get_weather", { city: "Paris" }), text(" B")];
      for (let i = 0; i <= input.length; i++) {
        expect(streamed([input.slice(0, i), input.slice(i)])).toEqual(expected);
      }
      expect(streamed([...input])).toEqual(expected);
    });
  }

  test("a tool without parameters gets an empty arguments object", () => {
    expect(cleanToolMarkup(`<tool_use>{"name":"search"}</tool_use>`, TOOLS).calls).toEqual([{ name: "search", arguments: "{}" }]);
    expect(cleanToolMarkup(`<tool_use><name>search</name></tool_use>`, TOOLS).calls).toEqual([{ name: "search", arguments: "{}" }]);
  });

  test("invoke parameters that are not strings are read as JSON", () => {
    const markup = `<function_calls><invoke name="search"><parameter name="q">rain 2024</parameter><parameter name="limit">3</parameter><parameter name="exact">true</parameter><parameter name="tags">["a"]</parameter></invoke></function_calls>`;
    expect(cleanToolMarkup(markup, TOOLS).calls).toEqual([
      { name: "search", arguments: JSON.stringify({ q: "rain 2024", limit: 3, exact: true, tags: ["a"] }) },
    ]);
  });

  test("a model-supplied __proto__ key stays an ordinary argument", () => {
    const r = cleanToolMarkup(`<tool_use><name>search</name><parameters><__proto__>x</__proto__></parameters></tool_use>`, TOOLS);
    expect(r.calls).toEqual([{ name: "search", arguments: '{"__proto__":"x"}' }]);
  });
});

describe("several calls", () => {
  test("adjacent blocks give calls in order with the text between kept", () => {
    const input = `A<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>B<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>C`;
    expect(streamed([input])).toEqual([text("A"), call("get_weather", { city: "Paris" }), text("B"), call("search", { q: "x" }), text("C")]);
  });

  test("back-to-back blocks with nothing between", () => {
    const one = `<tool_use>{"name":"search","arguments":{"q":"1"}}</tool_use>`;
    const two = `<tool_use>{"name":"search","arguments":{"q":"2"}}</tool_use>`;
    expect(cleanToolMarkup(one + two, TOOLS)).toEqual({
      text: "",
      calls: [
        { name: "search", arguments: '{"q":"1"}' },
        { name: "search", arguments: '{"q":"2"}' },
      ],
    });
  });

  test("a wrapper holding several calls, nested inside another tag name", () => {
    const input = `<tool_calls>\n<tool_call>{"name":"search","arguments":{"q":"1"}}</tool_call>\n<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>\n</tool_calls>`;
    expect(streamed([input])).toEqual([call("search", { q: "1" }), call("get_weather", { city: "Paris" })]);
  });

  test("several invokes in one function_calls block", () => {
    const input = `<function_calls><invoke name="search"><parameter name="q">a</parameter></invoke><invoke name="search"><parameter name="q">b</parameter></invoke></function_calls>`;
    expect(cleanToolMarkup(input, TOOLS).calls).toEqual([
      { name: "search", arguments: '{"q":"a"}' },
      { name: "search", arguments: '{"q":"b"}' },
    ]);
  });

  test("a JSON array of calls in one block", () => {
    const input = `<tool_call>[{"name":"search","arguments":{"q":"a"}},{"name":"get_weather","arguments":{"city":"Paris"}}]</tool_call>`;
    expect(cleanToolMarkup(input, TOOLS).calls.map((c) => c.name)).toEqual(["search", "get_weather"]);
  });

  test("the same tag nested inside itself closes at the matching outer tag", () => {
    const input = `x<tool_use><tool_use>{"name":"search","arguments":{"q":"a"}}</tool_use></tool_use>y`;
    expect(streamed([input])).toEqual([text("x"), call("search", { q: "a" }), text("y")]);
    for (let i = 0; i <= input.length; i++) expect(streamed([input.slice(0, i), input.slice(i)])).toEqual(streamed([input]));
  });
});

describe("what is removed without becoming a call", () => {
  test("a tool the request did not offer", () => {
    expect(cleanToolMarkup(`a<tool_use>{"name":"rm_rf","arguments":{}}</tool_use>b`, TOOLS)).toEqual({ text: "ab", calls: [] });
  });

  test("with no tools offered, every block is removed", () => {
    const input = `a<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>b<function_calls><invoke name="search"></invoke></function_calls>c`;
    expect(cleanToolMarkup(input, new Set())).toEqual({ text: "abc", calls: [] });
  });

  test.each([
    ["arguments string that is not JSON", `<tool_call>{"name":"search","arguments":"q=1"}</tool_call>`],
    ["arguments that are an array", `<tool_call>{"name":"search","arguments":[1,2]}</tool_call>`],
    ["arguments that are a number", `<tool_call>{"name":"search","arguments":5}</tool_call>`],
    ["a body that is broken JSON", `<tool_call>{"name":"search", "arguments": {"q": </tool_call>`],
    ["an arguments element with broken JSON", `<tool_use><name>search</name><arguments>{"q":</arguments></tool_use>`],
    ["an arguments element with plain text", `<tool_use><name>search</name><arguments>q is 1</arguments></tool_use>`],
    ["no name at all", `<tool_use>{"arguments":{"q":"a"}}</tool_use>`],
    ["a name that is not a string", `<tool_use>{"name":["search"],"arguments":{}}</tool_use>`],
  ])("unusable markup: %s", (_label, markup) => {
    expect(cleanToolMarkup(`before ${markup} after`, TOOLS)).toEqual({ text: "before  after", calls: [] });
  });

  test("a bad call next to a good one drops only the bad one", () => {
    const input = `<tool_call>[{"name":"search","arguments":"nope"},{"name":"search","arguments":{"q":"ok"}}]</tool_call>`;
    expect(cleanToolMarkup(input, TOOLS).calls).toEqual([{ name: "search", arguments: '{"q":"ok"}' }]);
  });
});

describe("prose is never cut", () => {
  test.each([
    ["an opening tag followed by words", "Wrap it in a <tool_call> tag."],
    ["an opening tag followed by words, and later a closing tag", "Use <tool_use> tags, closed by </tool_use>, around JSON."],
    ["inline code", "Write `<tool_use>` and the model calls a tool."],
    ["inline code holding a whole example", 'Example: `<tool_use>{"name":"search"}</tool_use>` is how it looks.'],
    ["an empty block", "The pair <tool_call></tool_call> marks a call."],
    ["comparisons and HTML", "1 < 2, 3<4, a <b>bold</b> word, <div class=x>, <tool_usex>{}</tool_usex>"],
    ["a tag-like phrase", "a <tool_call or function_call> tag"],
    ["a self-closing tag", "<tool_call/> or <tool_call /> then {"],
    ["a dangling opening tag with JSON after it", 'Now <tool_use>{"name":"search", and the rest never closes'],
    ["a closing tag alone", "stray </tool_call> here"],
  ])("%s", (_label, input) => {
    expect(cleanToolMarkup(input, TOOLS)).toEqual({ text: input, calls: [] });
    for (let i = 0; i <= input.length; i++) expect(streamed([input.slice(0, i), input.slice(i)])).toEqual([text(input)]);
  });
});

describe("holding text back", () => {
  test("text without < comes straight back, as the same string", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    const s = "plain words, nothing to see";
    const out = cleaner.push(s);
    expect(out).toEqual([text(s)]);
    expect((out[0] as { text: string }).text).toBe(s);
    expect(cleaner.flush()).toEqual([]);
  });

  test("a < that cannot start one of our tags is not held", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    expect(cleaner.push("if a < b and <div>")).toEqual([text("if a < b and <div>")]);
    expect(cleaner.push("x <p")).toEqual([text("x <p")]);
  });

  test("a < that could still start a tag is held only until it cannot", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    expect(cleaner.push("see <")).toEqual([text("see ")]);
    expect(cleaner.push("to")).toEqual([]);
    expect(cleaner.push("day")).toEqual([text("<today")]);
  });

  test("after a complete opening tag, one non-space character decides", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    expect(cleaner.push("Wrap it in a <tool_call>")).toEqual([text("Wrap it in a ")]);
    expect(cleaner.push("  ")).toEqual([]);
    expect(cleaner.push("tag")).toEqual([text("<tool_call>  tag")]);
  });

  test("inside a block, text is held until the closing tag, then only what follows is text", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    expect(cleaner.push('ok <tool_use>{"name":"search",')).toEqual([text("ok ")]);
    expect(cleaner.push('"arguments":{"q":"a"}}</tool_')).toEqual([]);
    expect(cleaner.push("use> next")).toEqual([call("search", { q: "a" }), text(" next")]);
  });

  test("an unclosed block is released unchanged at flush", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    expect(cleaner.push('Text <tool_use>{"name":"search"')).toEqual([text("Text ")]);
    expect(cleaner.flush()).toEqual([text('<tool_use>{"name":"search"')]);
    // The cleaner is reusable after a flush.
    expect(cleaner.push("more")).toEqual([text("more")]);
  });

  test("a complete block inside an unclosed one is still markup at flush (property-test regression)", () => {
    // Found by tests/property/tool-markup: a wrapper whose closing tag never came (`<tool_calls>[` here) held
    // everything after it, and flush released it all as text, so the complete call inside leaked as markup.
    const input = 'Sure. <tool_calls>[<tool_call>{"name":"search","arguments":{"q":"a"}}</tool_call> done';
    const want = [text("Sure. <tool_calls>["), call("search", { q: "a" }), text(" done")];
    expect(streamed([input])).toEqual(want);
    expect(streamed(input.split(""))).toEqual(want);
    // Also when the enclosing block's tag is the same as the inner one's, which keeps its count unbalanced.
    expect(cleanToolMarkup('<tool_use>{ <tool_use>{"name":"search"}</tool_use>', TOOLS)).toEqual({
      text: "<tool_use>{ ",
      calls: [{ name: "search", arguments: "{}" }],
    });
  });

  test("an unclosed block is released once it passes the size cap, without waiting for flush", () => {
    const cleaner = createToolMarkupCleaner({ toolNames: TOOLS });
    const opening = '<tool_use>{"name":"search","arguments":{"q":"';
    expect(cleaner.push(opening)).toEqual([]);
    const filler = "x".repeat(MAX_BLOCK_CHARS);
    // Past the cap the scan goes on as plain text, so the rest of this push (no `<` in it) is not held either.
    expect(merged(cleaner.push(filler))).toEqual([text(opening + filler)]);
    expect(cleaner.flush()).toEqual([]);
  });

  test("a block closing exactly at the cap is markup; one character more and it is text", () => {
    const head = '<tool_use>{"name":"search","arguments":{"q":"';
    const tail = '"}}</tool_use>';
    const fits = head + "y".repeat(MAX_BLOCK_CHARS - head.length - tail.length) + tail;
    expect(fits.length).toBe(MAX_BLOCK_CHARS);
    expect(cleanToolMarkup(fits, TOOLS).text).toBe("");
    expect(cleanToolMarkup(fits, TOOLS).calls).toHaveLength(1);
    const tooLong = head + "y".repeat(MAX_BLOCK_CHARS - head.length - tail.length + 1) + tail;
    expect(cleanToolMarkup(tooLong, TOOLS)).toEqual({ text: tooLong, calls: [] });
  });
});

describe("streamed output equals whole-text output for any split", () => {
  // A seeded generator so a failure is reproducible: the seed and input are in the assertion message.
  function rng(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const FRAGMENTS = [
    "hello ",
    "<",
    ">",
    "`",
    " ",
    "\n",
    "{",
    "}",
    "<tool_use>",
    "</tool_use>",
    "<tool_call>",
    "</tool_call>",
    "<tool_calls>",
    "</tool_calls>",
    "<function_calls>",
    "</function_calls>",
    "<tool_",
    "<tool_call name=\"search\">",
    '{"name":"search","arguments":{"q":"a"}}',
    '{"name":"nope"}',
    '<invoke name="get_weather"><parameter name="city">Paris</parameter></invoke>',
    "<name>search</name>",
    "<b>",
    "1 < 2",
  ];

  test("random texts, random splits", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      let input = "";
      const n = 1 + Math.floor(r() * 14);
      for (let k = 0; k < n; k++) input += FRAGMENTS[Math.floor(r() * FRAGMENTS.length)];
      // One chunk is exactly what cleanToolMarkup does; the join check below ties the two APIs together.
      const expected = streamed([input]);
      const chunks: string[] = [];
      let at = 0;
      while (at < input.length) {
        const len = 1 + Math.floor(r() * 6);
        chunks.push(input.slice(at, at + len));
        at += len;
      }
      const got = streamed(chunks);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        throw new Error(`seed ${seed}: ${JSON.stringify(chunks)}\n got ${JSON.stringify(got)}\n want ${JSON.stringify(expected)}`);
      }
      // Text pieces joined are the whole-text result, calls likewise.
      const r2 = cleanToolMarkup(input, TOOLS);
      expect(got.filter((p) => p.type === "text").map((p) => (p as { text: string }).text).join("")).toBe(r2.text);
      expect(got.filter((p) => p.type === "call").length).toBe(r2.calls.length);
    }
  });

  test("every split of a mixed text, including empty chunks", () => {
    const input = 'a `<tool_use>` b <tool_call>{"name":"search","arguments":{"q":"z"}}</tool_call> c <tool_use> d < e';
    const expected = streamed([input]);
    expect(expected).toEqual([text("a `<tool_use>` b "), call("search", { q: "z" }), text(" c <tool_use> d < e")]);
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j += 7) {
        expect(streamed([input.slice(0, i), "", input.slice(i, j), input.slice(j)])).toEqual(expected);
      }
    }
  });
});
