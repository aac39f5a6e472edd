/**
 * Output item ids that name their response (issue 32, cheaper keeping): every output item of a kept response,
 * streamed or collected, gets an id that names the response, and an `item_reference` to it is found in that
 * response's output (no row of its own), for its key only, while the response lives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { responseOfItem } from "../../src/gateway/responses/named-item-ids";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let alice: OpenAI;
let bob: OpenAI;

function lastInput(): any[] {
  return upstream.requests.filter((r) => r.path.endsWith("/responses")).at(-1)!.body.input;
}

beforeAll(async () => {
  // Fixed ids: the upstream numbers every reply's items the same, as a store-nothing upstream may.
  upstream = await startFakeUpstream({
    fixedIds: true,
    scenario: (body: any) => {
      const text = JSON.stringify(body.input);
      if (text.includes("tools please")) return { kind: "reasoning-call", reasoning: "thinking", calls: [{ name: "lookup", arguments: '{"q":1}' }, { name: "lookup", arguments: '{"q":2}' }] };
      if (text.includes("items as events")) return { kind: "empty-output", text: "from the events" };
      return { kind: "text", text: "plain" };
    },
  });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  alice = new OpenAI({ apiKey: await g.createKey(), baseURL: `${g.url}/v1`, maxRetries: 0 });
  bob = new OpenAI({ apiKey: await g.createKey(), baseURL: `${g.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** A streamed kept call: the completed response and every item id its events showed. */
async function streamed(input: string): Promise<{ response: any; eventIds: Set<string> }> {
  const stream = await alice.responses.create({ model: "gpt-test", input, stream: true });
  let response: any = null;
  const eventIds = new Set<string>();
  for await (const ev of stream as AsyncIterable<any>) {
    if (typeof ev.item_id === "string") eventIds.add(ev.item_id);
    if (ev.item && typeof ev.item.id === "string") eventIds.add(ev.item.id);
    if (ev.type === "response.completed") response = ev.response;
  }
  return { response, eventIds };
}

async function referenceWorks(ids: string[], expected: any[]): Promise<void> {
  // store: false, so the items are not kept again as this call's input (a copy a reference would find later).
  await alice.responses.create({ model: "gpt-test", store: false, input: [...ids.map((id) => ({ type: "item_reference" as const, id })), { role: "user" as const, content: "and?" }] });
  // What went upstream in their place: the items as kept (Gantry sends them without ids).
  const sent = lastInput().slice(0, ids.length);
  expect(sent.map((it: any) => it.type)).toEqual(expected.map((it) => it.type));
  expect(sent).toEqual(expected.map(({ id: _id, ...rest }) => expect.objectContaining(Object.fromEntries(Object.entries(rest).filter(([k]) => k !== "status")))));
}

describe("output item ids name their response", () => {
  test("streamed: every item id in the events and the output names the response, and a reference finds each", async () => {
    const { response, eventIds } = await streamed("tools please");
    const ids = response.output.map((it: any) => it.id as string);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(responseOfItem(id)).toBe(response.id);
    expect(ids.map((id: string) => id.split("_")[0])).toEqual(["rs", "fc", "fc"]);
    expect([...eventIds].sort()).toEqual([...ids].sort());
    const kept = await alice.responses.retrieve(response.id);
    expect(kept.output).toEqual(response.output);
    await referenceWorks(ids, response.output);
  });

  test("streamed with the items only in their events (the terminal output empty): kept and found the same", async () => {
    const { response, eventIds } = await streamed("items as events");
    const kept = await alice.responses.retrieve(response.id);
    expect(kept.output).toHaveLength(1);
    const id = kept.output[0]!.id!;
    expect(responseOfItem(id)).toBe(response.id);
    expect([...eventIds]).toEqual([id]);
    await referenceWorks([id], kept.output);
  });

  test("collected: the same ids; another key, or the response deleted, finds nothing", async () => {
    const made = await alice.responses.create({ model: "gpt-test", input: "tools please" });
    for (const it of made.output) expect(responseOfItem((it as any).id)).toBe(made.id);
    const id = (made.output[1] as any).id as string;
    await referenceWorks([id], [made.output[1]]);
    const other = await bob.responses.create({ model: "gpt-test", input: [{ type: "item_reference", id }] }).catch((e) => e);
    expect(other).toBeInstanceOf(OpenAI.BadRequestError);
    await alice.responses.delete(made.id);
    const gone = await alice.responses.create({ model: "gpt-test", input: [{ type: "item_reference", id }] }).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.BadRequestError);
    expect(gone.code).toBe("item_not_found");
  });
});
