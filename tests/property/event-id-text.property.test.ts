/**
 * Reading the id an event introduces off its JSON text (a kept stream's events that carry the response or an item)
 * learns exactly what parsing the event learns, whatever the event holds: ids nested anywhere, the id not first,
 * output items in the response, escapes, odd strings. When the text is not plain it says so (null), and the event
 * is parsed as before.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { idInEventText } from "../../src/gateway/responses/event-id-text";

/** The ids IdRewriter.learn maps from a parsed event, and whether it is rewritten as a response event. */
function learntByParsing(ev: any): { ids: string[]; response: boolean } {
  const ids: string[] = [];
  const add = (id: unknown) => {
    if (typeof id === "string" && id !== "" && id.length <= 200 && !ids.includes(id)) ids.push(id);
  };
  const response = ev.response;
  if (response && typeof response === "object") {
    add(response.id);
    if (Array.isArray(response.output)) for (const it of response.output) if (it && typeof it.id === "string") add(it.id);
  }
  if (ev.item && typeof ev.item === "object") add(ev.item.id);
  return { ids, response: ev.response !== undefined };
}

const idText = fc.oneof(fc.constantFrom("msg_1", "resp_abc", "fc_x", 'q"uote', "back\\slash", "é", ""), fc.string({ maxLength: 12 }));
const extra = fc.dictionary(fc.constantFrom("id", "type", "status", "content", "response", "item", "call_id", "x"), fc.oneof(fc.jsonValue({ maxDepth: 2 }), idText), { maxKeys: 3 });
const obj = fc.record({ id: fc.option(idText, { nil: undefined }), idFirst: fc.boolean(), extra });

function objectOf(o: { id: string | undefined; idFirst: boolean; extra: Record<string, unknown> }, more: Record<string, unknown> = {}): Record<string, unknown> {
  const { id: _drop, ...rest } = o.extra;
  if (o.id === undefined) return { ...rest, ...more };
  return o.idFirst ? { id: o.id, ...rest, ...more } : { ...rest, ...more, id: o.id };
}

const responseEvent = fc
  .record({ type: fc.constantFrom("response.created", "response.in_progress"), response: obj, output: fc.array(obj, { maxLength: 2 }), seq: fc.nat(50) })
  .map((e) => ({ text: JSON.stringify({ type: e.type, sequence_number: e.seq, response: objectOf(e.response, { output: e.output.map((o) => objectOf(o)) }) }), response: true }));
const itemEvent = fc
  .record({ type: fc.constantFrom("response.output_item.added", "response.output_item.done"), item: obj, top: extra, seq: fc.nat(50) })
  .map((e) => ({ text: JSON.stringify({ type: e.type, sequence_number: e.seq, output_index: 0, ...e.top, item: objectOf(e.item) }), response: false }));

test("an id read off the text is the one id parsing learns, and the event is rewritten the same way", () => {
  fc.assert(
    fc.property(fc.oneof(responseEvent, itemEvent), ({ text, response }) => {
      const found = idInEventText(text, response);
      if (found === null) return;
      const parsed = learntByParsing(JSON.parse(text));
      expect(parsed.ids).toEqual([found.id]);
      expect(parsed.response).toBe(found.response);
    }),
    { numRuns: 3000 },
  );
});

test("the plain events of OpenAI and of Gantry's simulator are read off the text", () => {
  const created = '{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","output":[],"store":false,"metadata":{}}}';
  const added = '{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}';
  const call = '{"type":"response.output_item.done","sequence_number":9,"output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\\"id\\":1}"}}';
  expect(idInEventText(created, true)).toEqual({ id: "resp_1", response: true });
  expect(idInEventText(added, false)).toEqual({ id: "msg_1", response: false });
  expect(idInEventText(call, false)).toEqual({ id: "fc_1", response: false });
  // Not plain: parsed as before.
  expect(idInEventText(created.replace('"output":[]', '"output":[{"id":"msg_1"}]'), true)).toBeNull();
  expect(idInEventText(added.replace('"id":"msg_1",', "").replace('"role"', '"id":"msg_1","role"'), false)).toBeNull();
  expect(idInEventText('{"type":"response.output_item.added","item":{"id": "msg_1"}}', false)).toBeNull();
  expect(idInEventText('{"type":"response.output_item.added","x":{"item":{"id":"msg_1"}}}', false)).toBeNull();
  expect(idInEventText('{"type":"response.output_item.added","item":{"id":"m\\u0073g"}}', false)).toBeNull();
});
