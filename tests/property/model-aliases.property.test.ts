/**
 * GANTRY_MODEL_ALIASES' matcher against a plain reading of its rule: an exact name wins, then the longest
 * matching pattern (the first written of equally long ones), names in any letter case; a name no entry
 * matches, or one aliased to itself, has no alias.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compileModelAliases } from "../../src/gateway/translate/model-aliases";
import { runs } from "./arbitraries";

/** A small alphabet, so generated names and patterns meet often. */
const piece = fc.constantFrom("claude", "-", "opus", "sonnet", "4", "5", ".", "Claude", "gpt", "x");
const name = fc.array(piece, { minLength: 1, maxLength: 5 }).map((p) => p.join(""));
const pattern = fc.array(fc.oneof(piece, fc.constant("*")), { minLength: 1, maxLength: 5 }).map((p) => p.join(""));
const target = fc.constantFrom("gpt-5.4", "gpt-5.2", "gpt-5-mini", "claude-opus-4");
const table = fc.array(fc.tuple(fc.oneof(name, pattern), target), { maxLength: 8 }).map((entries) => {
  // One entry per name in lower case (the setting refuses two spellings of one name).
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const [n, t] of entries) if (!seen.has(n.toLowerCase())) (seen.add(n.toLowerCase()), (out[n] = t));
  return out;
});

/** Whether `glob` (with `*`) matches `s` whole, by recursion rather than a regular expression. */
function globMatches(glob: string, s: string): boolean {
  if (glob === "") return s === "";
  if (glob[0] === "*") return globMatches(glob.slice(1), s) || (s !== "" && globMatches(glob, s.slice(1)));
  return s !== "" && glob[0] === s[0] && globMatches(glob.slice(1), s.slice(1));
}

function reference(t: Record<string, string>, model: string): string | null {
  const lower = model.toLowerCase();
  const entries = Object.entries(t);
  const exact = entries.find(([n]) => !n.includes("*") && n.toLowerCase() === lower);
  let found = exact?.[1];
  if (found === undefined) {
    let best: [string, string] | undefined;
    for (const e of entries) if (e[0].includes("*") && globMatches(e[0].toLowerCase(), lower) && (!best || e[0].length > best[0].length)) best = e;
    found = best?.[1];
  }
  return found === undefined || found === model ? null : found;
}

describe("model aliases", () => {
  test("the matcher agrees with the rule read plainly", () => {
    fc.assert(
      fc.property(table, fc.array(name, { minLength: 1, maxLength: 6 }), (t, names) => {
        const aliases = compileModelAliases(t).upstreamOf;
        // Twice: the second answer comes from the matcher's cache.
        for (const n of [...names, ...names]) expect(aliases(n)).toBe(reference(t, n));
      }),
      runs(400),
    );
  });

  test("an exact name wins over every pattern, whatever their length and order", () => {
    fc.assert(
      fc.property(name, fc.array(pattern, { maxLength: 5 }), (n, patterns) => {
        const t: Record<string, string> = {};
        for (const p of patterns) if (p.toLowerCase() !== n.toLowerCase()) t[p] = "gpt-5-mini";
        t[n] = "gpt-5.4";
        expect(compileModelAliases(t).upstreamOf(n.toUpperCase())).toBe("gpt-5.4");
      }),
      runs(300),
    );
  });

  test("examples: the operators' table, the longest pattern, no chains", () => {
    const compiled = compileModelAliases({ "claude-opus-*": "gpt-5.4", "claude-sonnet-*": "gpt-5.2", "claude-*": "gpt-5-mini", "claude-sonnet-4-5-fast": "gpt-5.2-fast", "gpt-5.2": "gpt-5.4" });
    const aliases = compiled.upstreamOf;
    expect(compiled.names).toEqual([{ id: "claude-sonnet-4-5-fast", target: "gpt-5.2-fast" }, { id: "gpt-5.2", target: "gpt-5.4" }]);
    expect(aliases("claude-opus-4-6")).toBe("gpt-5.4");
    expect(aliases("Claude-Sonnet-4-5")).toBe("gpt-5.2");
    expect(aliases("claude-haiku-4-5")).toBe("gpt-5-mini");
    expect(aliases("claude-sonnet-4-5-fast")).toBe("gpt-5.2-fast");
    // The target of one entry is the name of another: one step only.
    expect(aliases("claude-sonnet-4")).toBe("gpt-5.2");
    expect(aliases("gpt-5.4")).toBeNull();
    expect(compileModelAliases({}).upstreamOf("claude-opus-4")).toBeNull();
    expect(compileModelAliases({ "*": "gpt-5.4" }).upstreamOf("gpt-5.4")).toBeNull();
  });
});
