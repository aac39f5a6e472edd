/**
 * Raw passthrough reads a terminal event's usage from its text instead of parsing the whole response (whose output is
 * the answer). Whatever the response holds — keys in any order, text that looks like JSON, tool and output schemas
 * with a property named `usage`, an extension nesting an object shaped like usage, a string value "usage" before
 * another key's object, usage absent — the text reading gives the usage a parse gives, or gives up (undefined) and
 * lets the event be parsed. It never gives another one.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { lastUsageObject, terminalUsageFromText } from "../../src/gateway/wire/json-usage";
import { usageOf } from "../../src/gateway/wire/upstream-events";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { runs, trickyString } from "./arbitraries";

const usage = fc.record(
  {
    input_tokens: fc.nat(1_000_000),
    output_tokens: fc.nat(1_000_000),
    total_tokens: fc.nat(2_000_000),
    output_tokens_details: fc.record({ reasoning_tokens: fc.nat(1000) }),
  },
  { requiredKeys: ["input_tokens", "output_tokens"] },
);

/** A JSON schema with a property called `usage` (tools and structured outputs can have one). */
const schemaWithUsage = fc.constantFrom(
  { type: "object", properties: { usage: { type: "object", properties: { input_tokens: { type: "integer" } } } } },
  { type: "object", properties: { usage: { type: "string" }, other: { type: "object" } } },
);

/** Text that carries JSON-looking content, "usage" among it: escaped in the event's JSON, so never a key there. */
const text = fc.oneof(trickyString, fc.constantFrom('"usage":{"input_tokens":1,"output_tokens":2}', '{"usage": {"input_tokens": 9, "output_tokens": 9}}', "usage"));

const responseFields = fc.record(
  {
    id: fc.constant("resp_1"),
    status: fc.constantFrom("completed", "incomplete", "failed"),
    output: fc.array(fc.record({ type: fc.constant("message"), content: fc.array(fc.record({ type: fc.constant("output_text"), text }), { maxLength: 3 }) }), { maxLength: 3 }),
    tools: fc.array(fc.record({ type: fc.constant("function"), name: fc.constantFrom("usage", "lookup"), parameters: schemaWithUsage }), { maxLength: 2 }),
    text: fc.record({ format: fc.record({ type: fc.constant("json_schema"), name: fc.constant("usage"), schema: schemaWithUsage }) }),
    // A string value "usage" followed by a key whose value is an object.
    metadata: fc.constant({ kind: "usage" }),
    instructions: text,
    // An extension nesting an object shaped like usage: never taken for the response's own.
    extra: fc.constant({ usage: { input_tokens: 1, output_tokens: 1 } }),
    usage,
  },
  { requiredKeys: ["id", "status"] },
);

/** The response's keys in a random order: upstreams do not all write usage last. */
const terminalEvent = fc.tuple(responseFields, fc.infiniteStream(fc.nat()), fc.constantFrom("response.completed", "response.incomplete", "response.failed")).map(([fields, order, type]) => {
  const keys = Object.keys(fields);
  const ranks = new Map(keys.map((k) => [k, order.next().value as number]));
  const response = Object.fromEntries([...keys].sort((a, b) => ranks.get(a)! - ranks.get(b)!).map((k) => [k, (fields as Record<string, unknown>)[k]]));
  return { type, sequence_number: 7, response };
});

test("a terminal event's usage read from its text is the parsed one, or nothing", () => {
  const settings = runs(400);
  let read = 0;
  fc.assert(
    fc.property(terminalEvent, fc.boolean(), (ev, spaced) => {
      const data = spaced ? JSON.stringify(ev, null, 1) : JSON.stringify(ev);
      const fromText = terminalUsageFromText(data);
      if (fromText === undefined) return;
      read++;
      expect(fromText).toEqual(usageOf(JSON.parse(data) as ResponsesStreamEvent)!);
    }),
    settings,
  );
  // Not a test that passes by always giving up: most events (usage present, nothing shaped like it after) are read.
  expect(read).toBeGreaterThan(settings.numRuns! * 0.25);
});

test("usage written last, as OpenAI writes it, is always read from the text", () => {
  fc.assert(
    fc.property(responseFields, usage, (fields, u) => {
      const { usage: _, extra: __, ...rest } = fields;
      const data = JSON.stringify({ type: "response.completed", sequence_number: 3, response: { ...rest, usage: u } });
      expect(terminalUsageFromText(data) as unknown).toEqual(u);
    }),
    runs(200),
  );
});

test("a string value \"usage\" is not a key: the next key's object is not taken for usage", () => {
  expect(lastUsageObject('{"name":"usage","x":{"input_tokens":1,"output_tokens":2}}')).toBeNull();
  expect(lastUsageObject('{"usage" : {"input_tokens":1,"output_tokens":2}}')).toEqual({ input_tokens: 1, output_tokens: 2 } as never);
});
