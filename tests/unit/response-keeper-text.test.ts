/**
 * A kept stream's response is stored from the terminal event's text as the caller got it (Gantry's ids, `store:
 * true`, the response it continues): the repository gets that text to keep as is, and it is the response's JSON.
 */
import { expect, test } from "bun:test";
import { storedItemsOf, type StoredResponse } from "../../src/gateway/responses/stored-response-repository";
import { ResponseKeeper } from "../../src/gateway/responses/response-keeper";

function keeperWith(puts: StoredResponse[], previousId: string | null) {
  const responses = { put: async (r: StoredResponse) => void puts.push(r) } as any;
  const conversation = { input: [], newItems: [], previousId, previousAccount: null, encryptedOwners: new Map(), responseId: "resp_0000000000000000000000000000abcd", itemsNamed: 0 };
  return new ResponseKeeper({ responses, config: { storedResponsesDays: 1, storedResponsesPerKey: 10, storedBytesPerKey: 1_000_000 }, now: () => 1 }, "k1", "m", conversation, true);
}

for (const previousId of [null, "resp_0000000000000000000000000000beef"]) {
  test(`the terminal event's response text is what is kept (previous: ${previousId ?? "none"})`, async () => {
    const puts: StoredResponse[] = [];
    const keeper = keeperWith(puts, previousId);
    const upstream = { id: "resp_up", object: "response", status: "completed", store: false, previous_response_id: null, output: [{ id: "msg_up", type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }] };
    const sent: string[] = [];
    for (const ev of [
      { type: "response.created", sequence_number: 0, response: { ...upstream, status: "in_progress", output: [] } },
      { type: "response.output_item.done", sequence_number: 1, output_index: 0, item: upstream.output[0] },
      { type: "response.completed", sequence_number: 2, response: upstream },
    ]) {
      keeper.see(ev as any);
      sent.push(keeper.rewrite(ev as any, JSON.stringify(ev)));
    }
    await keeper.keepStreamed();
    expect(puts).toHaveLength(1);
    const terminal = JSON.parse(sent[2]!).response;
    expect(terminal.id).toBe("resp_0000000000000000000000000000abcd");
    expect(terminal.store).toBe(true);
    expect(puts[0]!.responseJson).toBeDefined();
    expect(JSON.parse(puts[0]!.responseJson!)).toEqual(terminal);
    expect(puts[0]!.response).toEqual(terminal);
  });
}

/**
 * What is kept is read off the upstream's response parsed before rewriting (status, ids, whether the text already
 * says what stamp writes), and the text is parsed again only when it is not plain. Whatever the upstream sent, the
 * kept response says Gantry's id, `store: true` and the response it continues, and an output item whose id does not
 * name the response still gets a row (storedItemsOf), as when the whole response was parsed.
 */
const LONG_ID = `msg_${"x".repeat(240)}`;
const variants: Array<[string, Record<string, unknown>, string | null]> = [
  ["plain", {}, null],
  ["plain, continuing", {}, "resp_0000000000000000000000000000beef"],
  ["no store field", { store: undefined }, null],
  ["no previous_response_id field, continuing", { previous_response_id: undefined }, "resp_0000000000000000000000000000beef"],
  ["an output item id too long to replace", { output: [{ id: LONG_ID, type: "message", role: "assistant", content: [] }] }, null],
  ["an output item without an id", { output: [{ type: "message", role: "assistant", content: [] }] }, null],
  ["incomplete", { status: "incomplete" }, null],
];
for (const [name, change, previousId] of variants) {
  test(`kept from the text when it is plain, else parsed: ${name}`, async () => {
    const puts: StoredResponse[] = [];
    const keeper = keeperWith(puts, previousId);
    const upstream: Record<string, unknown> = { id: "resp_up", object: "response", status: "completed", store: false, previous_response_id: null, output: [{ id: "msg_up", type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }], ...change };
    for (const [k, v] of Object.entries(upstream)) if (v === undefined) delete upstream[k];
    const output = upstream.output as Array<Record<string, unknown>>;
    const events = [
      { type: "response.created", sequence_number: 0, response: { ...upstream, status: "in_progress", output: [] } },
      ...output.map((item, i) => ({ type: "response.output_item.done", sequence_number: 1 + i, output_index: i, item })),
      { type: upstream.status === "incomplete" ? "response.incomplete" : "response.completed", sequence_number: 9, response: upstream },
    ];
    for (const ev of events) {
      keeper.see(ev as any);
      keeper.rewrite(ev as any, JSON.stringify(ev));
    }
    await keeper.keepStreamed();
    expect(puts).toHaveLength(1);
    const r = puts[0]!;
    const kept = r.responseJson !== undefined ? JSON.parse(r.responseJson) : r.response;
    expect(kept).toEqual(r.response);
    expect(r.id).toBe("resp_0000000000000000000000000000abcd");
    expect(kept.id).toBe(r.id);
    expect(kept.store).toBe(true);
    if (previousId) expect(kept.previous_response_id).toBe(previousId);
    // The rows the store writes for output items are those a fully parsed response gives.
    const parsedWhole: StoredResponse = { ...r, response: JSON.parse(JSON.stringify(r.response)), outputIdsNamed: undefined };
    expect(storedItemsOf(r, []).rows).toEqual(storedItemsOf(parsedWhole, []).rows);
    expect(storedItemsOf(r, []).rows.length).toBe(name.includes("too long") ? 1 : 0);
    // Plain: stored from the text, with no output row to look for.
    expect(r.outputIdsNamed === true).toBe(!/field|too long/.test(name));
  });
}

test("input items whose ids all name the response are kept in its row with no lookups; a caller's own id still gets its row", async () => {
  const responseId = "resp_0000000000000000000000000000abcd";
  for (const callerId of [null, "msg_callers_own"]) {
    const puts: StoredResponse[] = [];
    const named = (n: number) => `msg_${responseId.slice(5)}${n.toString(16).padStart(4, "0")}`;
    const newItems = [
      { id: named(0), type: "message", role: "user", content: [{ type: "input_text", text: "a" }] },
      { id: callerId ?? named(1), type: "message", role: "user", content: [{ type: "input_text", text: "b" }] },
    ];
    const responses = { put: async (r: StoredResponse) => void puts.push(r) } as any;
    const conversation = { input: newItems, newItems, previousId: null, previousAccount: null, encryptedOwners: new Map(), responseId, itemsNamed: callerId ? 1 : 2 };
    const keeper = new ResponseKeeper({ responses, config: { storedResponsesDays: 1, storedResponsesPerKey: 10, storedBytesPerKey: 1_000_000 }, now: () => 1 }, "k1", "m", conversation, true);
    await keeper.finish({ id: "resp_up", object: "response", status: "completed", output: [] } as any);
    const r = puts[0]!;
    expect(r.inputIdsNamed === true).toBe(callerId === null);
    const texts = r.inputItems.map((it) => JSON.stringify(it));
    const hinted = storedItemsOf(r, texts);
    expect(hinted).toEqual(storedItemsOf({ ...r, inputIdsNamed: undefined }, texts));
    expect(hinted.rows.map((row) => row.itemId)).toEqual(callerId ? [callerId] : []);
  }
});
