/**
 * A text delta's fields read off its JSON text are the fields a parse gives, whatever the upstream's JSON looks like
 * (keys in any order, repeated keys, nested objects with keys of the same names, escapes, `\u003c` for `<` as Go
 * writes it, raw lone surrogates, logprobs, odd numbers, spaces), or nothing (null), and then the event is parsed.
 * Never other fields.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { readTextDelta } from "../../src/gateway/wire/delta-text";
import { runs, trickyString } from "./arbitraries";

const index = fc.oneof({ arbitrary: fc.nat(20), weight: 4 }, { arbitrary: fc.constantFrom(-1, 1.5, 1e21, "0", null, 2 ** 40), weight: 1 });
const fields = fc.record(
  {
    type: fc.constant("response.output_text.delta"),
    sequence_number: fc.nat(1000),
    item_id: fc.oneof(trickyString, fc.constant('"delta":"x"')),
    output_index: index,
    content_index: index,
    delta: fc.oneof(fc.string({ unit: fc.constantFrom("a", " ", "é", "👋", "{", "<") }), fc.string(), trickyString, fc.constantFrom("héllo 👋", "a<b", '"q"', "\\", "\u2028", "\ud800x")),
    logprobs: fc.oneof(fc.constant([]), fc.constant(null), fc.constant([{ token: "a", logprob: -0.1, bytes: [97], top_logprobs: [] }]), fc.constant([-0.1])),
    obfuscation: trickyString,
  },
  { requiredKeys: ["type"] },
);

/** The event's JSON with its keys in a random order, sometimes a key repeated, spaced, or `<` escaped as Go does. */
/** An extension nesting keys of the same names (in one event of ten): never read for the event's own. */
const NESTED = { delta: "nested", output_index: 99, content_index: 98 };

const eventText = fc.tuple(fields, fc.infiniteStream(fc.nat()), fc.constantFrom("plain", "spaced", "go", "repeat", "lone"), fc.nat(9)).map(([given, order, style, nest]) => {
  const f = nest === 0 ? { ...given, extra: NESTED } : given;
  const keys = Object.keys(f);
  const ranks = new Map(keys.map((k) => [k, order.next().value as number]));
  const sorted = Object.fromEntries([...keys].sort((a, b) => ranks.get(a)! - ranks.get(b)!).map((k) => [k, (f as Record<string, unknown>)[k]]));
  let text = style === "spaced" ? JSON.stringify(sorted, null, 1) : JSON.stringify(sorted);
  if (style === "go") text = text.replaceAll("<", "\\u003c");
  // A lone surrogate written raw, not escaped (JSON allows it; serialisation escapes it).
  if (style === "lone") text = text.replaceAll("\\ud800", "\ud800");
  if (style === "repeat") text = text.replace("{", '{"delta":"first","output_index":7,');
  return text;
});

test("read off the text: the parsed fields, or nothing", () => {
  const settings = runs(1000);
  let read = 0;
  fc.assert(
    fc.property(eventText, (text) => {
      const got = readTextDelta(text);
      if (got === null) return;
      read++;
      const ev = JSON.parse(text);
      expect(got.delta).toBe(ev.delta);
      expect(got.outputIndex).toBe(typeof ev.output_index === "number" ? ev.output_index : -1);
      expect(got.contentIndex).toBe(typeof ev.content_index === "number" ? ev.content_index : 0);
      expect(Array.isArray(ev.logprobs) && ev.logprobs.length > 0).toBe(false);
      // Its JSON string is the delta in quotes: what serialising it writes.
      expect(`"${got.delta}"`).toBe(JSON.stringify(ev.delta));
    }),
    settings,
  );
  // Not a test that passes by always giving up: about one event in five is plain enough to be read.
  expect(read).toBeGreaterThan(settings.numRuns! * 0.1);
});
