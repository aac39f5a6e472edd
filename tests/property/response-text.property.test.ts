/**
 * A kept stream stores the terminal event's response cut from the event's text (response-text.ts) instead of
 * serialising the parsed response again: whenever the text is cut, it is the response's JSON (the same value), and
 * the plain events Gantry and OpenAI send are cut; anything not plain is left to serialising (null).
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { responseTextOf } from "../../src/gateway/responses/response-text";

const response = { id: "resp_1", object: "response", status: "completed", store: true, output: [{ id: "msg_1", type: "message", content: [{ type: "output_text", text: 'a "quoted" {brace} [list] "response":' }] }], usage: { input_tokens: 1 } };

test("a plain terminal event: the response's own JSON text", () => {
  const text = JSON.stringify({ type: "response.completed", sequence_number: 27, response });
  expect(responseTextOf(text, JSON.parse(text))).toBe(JSON.stringify(response));
  const spaced = JSON.stringify({ type: "response.completed", response }, null, 2);
  expect(JSON.parse(responseTextOf(spaced, JSON.parse(spaced))!)).toEqual(response);
});

test("not plain: null (a key after the response, an object or a list before it, no response key)", () => {
  const cases = [
    { type: "response.completed", response, sequence_number: 1 },
    { type: "response.completed", meta: { response: { id: "x" } }, response },
    { type: "response.completed", tags: ["a"], response },
    { type: "response.completed", note: "{", response },
  ];
  for (const ev of cases) expect(responseTextOf(JSON.stringify(ev), JSON.parse(JSON.stringify(ev)))).toBeNull();
  expect(responseTextOf('{"type":"x","response" : {"id":"r"}}', { type: "x", response: { id: "r" } })).toBeNull();
  // A key that is a number comes first among the parsed keys, wherever the text has it.
  const numbered = '{"type":"x","response":{"id":"r"},"1":{"a":1}}';
  expect(responseTextOf(numbered, JSON.parse(numbered))).toBeNull();
});

test("property: whatever the event holds, a text that is cut is the response's JSON", () => {
  const key = fc.constantFrom("type", "sequence_number", "response", "item", "x", "response.x", "1", "01");
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }));
  const event = fc.array(fc.tuple(key, value), { maxLength: 5 }).map((pairs) => {
    const ev: Record<string, unknown> = {};
    for (const [k, v] of pairs) ev[k] = v;
    return ev;
  });
  fc.assert(
    fc.property(event, fc.boolean(), (ev, spaced) => {
      const text = spaced ? JSON.stringify(ev, null, 1) : JSON.stringify(ev);
      const parsed = JSON.parse(text);
      const cut = responseTextOf(text, parsed);
      if (cut !== null) expect(JSON.parse(cut)).toEqual(parsed.response);
    }),
    { numRuns: 3000 },
  );
});
