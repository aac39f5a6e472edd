import { expect, test } from "bun:test";
import fc from "fast-check";
import { sequenceInText } from "../../src/gateway/wire/sequence-text";

test("the sequence number read off an event's text is the one parsing finds", () => {
  fc.assert(
    fc.property(fc.nat({ max: 2 ** 40 }), fc.string(), fc.boolean(), (n, text, first) => {
      const ev = first ? { sequence_number: n, type: "response.created", response: { id: "r", text } } : { type: "x", response: { text }, sequence_number: n };
      expect(sequenceInText(JSON.stringify(ev))).toBe(n);
    }),
  );
});

test("no number: -1", () => {
  expect(sequenceInText('{"type":"response.created","response":{}}')).toBe(-1);
  expect(sequenceInText('{"sequence_number":null}')).toBe(-1);
  expect(sequenceInText('{"sequence_number": 7}')).toBe(7);
});
