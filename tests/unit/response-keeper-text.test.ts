/**
 * A kept stream's response is stored from the terminal event's text as the caller got it (Gantry's ids, `store:
 * true`, the response it continues): the repository gets that text to keep as is, and it is the response's JSON.
 */
import { expect, test } from "bun:test";
import type { StoredResponse } from "../../src/gateway/responses/stored-response-repository";
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
