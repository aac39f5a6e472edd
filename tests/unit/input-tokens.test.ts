/**
 * count_tokens' counting (translate/input-tokens.ts with the lazily loaded tokenizers) against input-token figures
 * OpenAI's API reported for the same conversations (tests/fixtures/token-counts/openai-reported.json, each with
 * its source): the expected numbers come from the API, not from this code.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { IMAGE_TOKENS, LOW_DETAIL_IMAGE_TOKENS, countInputTokens, planInputTokens, textSlices, tokenizerFamilyOf } from "../../src/gateway/translate/input-tokens";
import { BUDGET_MS, SLICE_CHARS, countPlanned, tokenizerFor } from "../../src/gateway/upstream/tokenizers";

const ROOT = join(import.meta.dir, "../..");
const corpus = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/token-counts/openai-reported.json"), "utf8")) as {
  cases: Array<{ name: string; source: string; request: any; input_tokens: number }>;
};

async function count(request: any): Promise<number> {
  return countInputTokens(request, await tokenizerFor(tokenizerFamilyOf(request.model)));
}

describe("input tokens against the API's own figures", () => {
  test("every case of the corpus within 3% (at least 1 token); the figures as a whole within 1%", async () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(20);
    let ours = 0;
    let theirs = 0;
    const off: string[] = [];
    for (const c of corpus.cases) {
      const n = await count(c.request);
      ours += n;
      theirs += c.input_tokens;
      if (Math.abs(n - c.input_tokens) > Math.max(1, Math.ceil(c.input_tokens * 0.03))) off.push(`${c.name}: ${n}, the API said ${c.input_tokens}`);
    }
    expect(off).toEqual([]);
    expect(Math.abs(ours - theirs) / theirs).toBeLessThan(0.01);
  });

  test("both families are in the corpus, and the family follows the model", () => {
    const families = new Set(corpus.cases.map((c) => tokenizerFamilyOf(c.request.model)));
    expect([...families].sort()).toEqual(["cl100k_base", "o200k_base"]);
    for (const m of ["gpt-5.4", "gpt-5-mini", "gpt-4o", "gpt-4.1-2025-04-14", "o3", "gpt-4.5-preview", "claude-sonnet-4-5"]) expect(tokenizerFamilyOf(m)).toBe("o200k_base");
    for (const m of ["gpt-4", "gpt-4-turbo", "gpt-4-0613", "gpt-3.5-turbo", "gpt-35-turbo"]) expect(tokenizerFamilyOf(m)).toBe("cl100k_base");
  });
});

describe("what a tokenizer cannot see, and what a caller may send", () => {
  test("images at OpenAI's documented cost, files by their size, a structured-output schema by its text", async () => {
    const base = { model: "gpt-5.4", input: [{ role: "user", content: [{ type: "input_text", text: "Describe it." }] }] };
    const plain = await count(base);
    const withImages = await count({
      ...base,
      input: [{ role: "user", content: [{ type: "input_text", text: "Describe it." }, { type: "input_image", image_url: "data:image/png;base64,AAAA" }, { type: "input_image", image_url: "https://x/y.png", detail: "low" }] }],
    });
    expect(withImages - plain).toBe(IMAGE_TOKENS + LOW_DETAIL_IMAGE_TOKENS);
    const pdf = "A".repeat(4000);
    const withFile = await count({ ...base, input: [{ role: "user", content: [{ type: "input_text", text: "Describe it." }, { type: "input_file", file_data: `data:application/pdf;base64,${pdf}` }] }] });
    expect(withFile - plain).toBe(750);
    const withSchema = await count({ ...base, text: { format: { type: "json_schema", name: "x", schema: { type: "object", properties: { a: { type: "string" } } } } } });
    expect(withSchema).toBeGreaterThan(plain + 5);
  });

  test("tool calls and their outputs count; reasoning items and unknown items do not", async () => {
    const base = { model: "gpt-5.4", input: [{ role: "user", content: "Run it." }] };
    const plain = await count(base);
    const call = { type: "function_call", call_id: "c1", name: "bash", arguments: '{"command":"echo gantry-ok"}' };
    const output = { type: "function_call_output", call_id: "c1", output: "gantry-ok\n" };
    const withCall = await count({ ...base, input: [...base.input, call, output] });
    expect(withCall).toBeGreaterThan(plain + 15);
    const withNoise = await count({ ...base, input: [...base.input, { type: "reasoning", encrypted_content: "x".repeat(5000), summary: [] }, { type: "item_reference", id: "x" }, null, 5, "text"] });
    expect(withNoise).toBe(plain);
  });

  test("special-token markers in text are text; hostile schemas are counted, never thrown on", async () => {
    const n = await count({ model: "gpt-5.4", input: "<|endoftext|><|im_start|>system" });
    expect(n).toBeGreaterThan(10);
    const hostile = await count({
      model: "gpt-5.4",
      input: "x",
      tools: [
        { type: "function", name: "a", parameters: { type: "object", required: 5, properties: { p: null, q: { type: ["string", "null"] }, r: { type: "array", items: 7 }, __proto__: { type: "string" } } } },
        { type: "function", name: "b", parameters: "not a schema" },
        { type: "function" },
        { type: "web_search" },
        null,
      ],
      tool_choice: { type: "function", name: 5 },
    });
    expect(hostile).toBeGreaterThan(10);
  });

  test("a string input, instructions and an empty request", async () => {
    expect(await count({ model: "gpt-5.4" })).toBe(3);
    const both = await count({ model: "gpt-5.4", instructions: "Be brief.", input: "hello" });
    expect(both).toBe(3 + (3 + 1 + 3) + (3 + 1 + 1));
  });
});

describe("counting in slices, within a budget", () => {
  test("the planned count in slices equals the whole count on the corpus and on long ordinary text", async () => {
    for (const c of corpus.cases) expect(await countPlanned(planInputTokens(c.request), tokenizerFamilyOf(c.request.model))).toBe(c.input_tokens);
    const words = ["function", "const", "the", "return", "{", "}", "\n", "value", "Gantry", "tokens", "  ", "é", "数据", "🙂"];
    const long = Array.from({ length: 60_000 }, (_, i) => words[(i * 7) % words.length]).join(" ");
    expect(long.length).toBeGreaterThan(SLICE_CHARS * 10);
    const request = { model: "gpt-5.4", input: long };
    expect(await countPlanned(planInputTokens(request), "o200k_base")).toBe(countInputTokens(request, await tokenizerFor("o200k_base")));
  });

  test("slices: at most the size, cut before a space when one is near, never inside a surrogate pair, nothing lost", () => {
    const text = "word ".repeat(10) + "x".repeat(25) + "🙂".repeat(20);
    const slices = textSlices(text, 16);
    expect(slices.join("")).toBe(text);
    expect(slices.every((s) => s.length <= 16)).toBe(true);
    expect(slices[0]).toBe("word word word");
    for (const s of slices) expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(s)).toBe(false);
  });

  test("past the budget the rest is extrapolated at the rate counted so far", async () => {
    let t = 0;
    // Each reading of the clock moves it on: the budget runs out after a few slices.
    const clock = () => (t += BUDGET_MS / 4);
    const text = "hello world ".repeat(SLICE_CHARS);
    const plan = { fixed: 7, texts: [text] };
    const n = await countPlanned(plan, "o200k_base", clock);
    const exact = (await tokenizerFor("o200k_base"))(text) + 7;
    expect(Math.abs(n - exact) / exact).toBeLessThan(0.01);
  });
});

describe("loaded lazily", () => {
  test("nothing in src/ imports a tokenizer's tables statically: start-up and other requests do not load them", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith(".ts")) files.push(path);
      }
    };
    walk(join(ROOT, "src"));
    const bad = files.filter((f) => /(from\s+|import\s+)["']gpt-tokenizer(\/(encoding|bpeRanks|model)\/[^"']*|\/main)?["']/.test(readFileSync(f, "utf8")));
    expect(bad).toEqual([]);
  });

  test("each family is loaded once", async () => {
    const a = tokenizerFor("o200k_base");
    expect(tokenizerFor("o200k_base")).toBe(a);
    expect((await a)("hello world")).toBe(2);
  });
});
