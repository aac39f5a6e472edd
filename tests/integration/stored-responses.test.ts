/**
 * Responses kept for their callers over an upstream that stores nothing (the fake refuses previous_response_id and
 * any item id, and numbers every reply's ids the same): previous_response_id, item_reference, retrieve, input
 * items, delete, per key, streamed and not, with the openai SDK as the client; store:false keeps nothing; expiry.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let clock = Date.parse("2026-06-01T00:00:00Z");
let alice: OpenAI;
let bob: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream({ fixedIds: true });
  g = await startGantry({ now: () => clock, config: { upstreamUrl: upstream.url } });
  alice = new OpenAI({ apiKey: await g.createKey(), baseURL: `${g.url}/v1`, maxRetries: 0 });
  bob = new OpenAI({ apiKey: await g.createKey(), baseURL: `${g.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** The input the upstream got in the last /responses call, as role: text lines. */
function lastUpstreamInput(): string[] {
  const body = upstream.requests.filter((r) => r.path.endsWith("/responses")).at(-1)!.body;
  expect(body.previous_response_id).toBeUndefined();
  for (const item of body.input) expect(item.id).toBeUndefined();
  return body.input.map((it: any) => `${it.role}: ${it.content.map((p: any) => p.text).join("")}`);
}

describe("previous_response_id", () => {
  test("the second turn goes upstream with the first one's input and output; the reply names its predecessor", async () => {
    const first = await alice.responses.create({ model: "gpt-test", input: "first question" });
    expect(first.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(first.output_text).toBe("Echo: first question");
    const second = await alice.responses.create({ model: "gpt-test", input: "second question", previous_response_id: first.id });
    expect(lastUpstreamInput()).toEqual(["user: first question", "assistant: Echo: first question", "user: second question"]);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.id).not.toBe(first.id);
    // The upstream gave both replies the same ids; the caller never sees them twice.
    expect(second.output[0]!.id).not.toBe(first.output[0]!.id);
    const third = await alice.responses.create({ model: "gpt-test", input: "third", previous_response_id: second.id, stream: false });
    expect(lastUpstreamInput()).toHaveLength(5);
    expect(third.output_text).toBe("Echo: third");
  });

  test("streamed the same: Gantry's ids in every event, the response kept before the stream ends", async () => {
    const first = await alice.responses.create({ model: "gpt-test", input: "streamed one", stream: true });
    let completed: any = null;
    const itemIds = new Set<string>();
    for await (const ev of first) {
      if ("item_id" in ev) itemIds.add((ev as any).item_id);
      if (ev.type === "response.completed") completed = ev.response;
    }
    expect(completed.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(completed.store).toBe(true);
    expect([...itemIds]).toEqual([completed.output[0].id]);
    const next = await alice.responses.create({ model: "gpt-test", input: "and then", previous_response_id: completed.id, stream: true });
    let nextCompleted: any = null;
    for await (const ev of next) if (ev.type === "response.completed") nextCompleted = ev.response;
    expect(nextCompleted.previous_response_id).toBe(completed.id);
    expect(lastUpstreamInput()).toEqual(["user: streamed one", "assistant: Echo: streamed one", "user: and then"]);
  });

  test("an unknown id, another key's, or a deleted one is a 400 previous_response_not_found, never a silent answer", async () => {
    const mine = await alice.responses.create({ model: "gpt-test", input: "private" });
    const before = upstream.requests.length;
    for (const [client, id] of [[alice, "resp_unknown"], [bob, mine.id]] as const) {
      const err = await client.responses.create({ model: "gpt-test", input: "x", previous_response_id: id }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.code).toBe("previous_response_not_found");
      expect(err.param).toBe("previous_response_id");
    }
    await alice.responses.delete(mine.id);
    const gone = await alice.responses.create({ model: "gpt-test", input: "x", previous_response_id: mine.id }).catch((e) => e);
    expect(gone.code).toBe("previous_response_not_found");
    expect(upstream.requests.length).toBe(before);
  });
});

describe("retrieve, input items, delete", () => {
  test("per key: the owner gets it back as it was returned; another key gets 404", async () => {
    const made = await alice.responses.create({ model: "gpt-test", input: [{ role: "user", content: "keep me" }] });
    const back = await alice.responses.retrieve(made.id);
    expect(back.id).toBe(made.id);
    expect(back.output).toEqual(made.output);
    expect(back.output_text).toBe("Echo: keep me");
    expect(await bob.responses.retrieve(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    const items = await alice.responses.inputItems.list(made.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: "message", role: "user" });
    expect(items.data[0]!.id).toMatch(/^msg_/);
    expect(await bob.responses.delete(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    await alice.responses.delete(made.id);
    expect(await alice.responses.retrieve(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("input items are paginated like OpenAI's: limit, order, after, has_more", async () => {
    const input = Array.from({ length: 5 }, (_, i) => ({ role: "user" as const, content: `part ${i}` }));
    const made = await alice.responses.create({ model: "gpt-test", input });
    const get = (q: string) => fetch(`${g.url}/v1/responses/${made.id}/input_items?${q}`, { headers: { authorization: `Bearer ${alice.apiKey}` } }).then((r) => r.json());
    const asc = await get("order=asc&limit=2");
    expect(asc.data.map((it: any) => it.content[0].text)).toEqual(["part 0", "part 1"]);
    expect(asc.has_more).toBe(true);
    const next = await get(`order=asc&limit=2&after=${asc.last_id}`);
    expect(next.data.map((it: any) => it.content[0].text)).toEqual(["part 2", "part 3"]);
    const desc = await get("limit=100");
    expect(desc.data.map((it: any) => it.content[0].text)).toEqual(["part 4", "part 3", "part 2", "part 1", "part 0"]);
    expect(desc.has_more).toBe(false);
    const bad = await fetch(`${g.url}/v1/responses/${made.id}/input_items?limit=0`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe("limit");
  });

  test("store: false keeps nothing", async () => {
    const made = await alice.responses.create({ model: "gpt-test", input: "forget me", store: false });
    expect(await alice.responses.retrieve(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("item_reference", () => {
  test("resolved from the key's stored items; an unknown one is a 400 naming it", async () => {
    const first = await alice.responses.create({ model: "gpt-test", input: "referenced" });
    await alice.responses.create({
      model: "gpt-test",
      input: [{ type: "item_reference", id: first.output[0]!.id! }, { role: "user", content: "and?" }],
    });
    expect(lastUpstreamInput()).toEqual(["assistant: Echo: referenced", "user: and?"]);
    const err = await alice.responses.create({ model: "gpt-test", input: [{ type: "item_reference", id: "msg_nope" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain("msg_nope");
    const other = await bob.responses.create({ model: "gpt-test", input: [{ type: "item_reference", id: first.output[0]!.id! }] }).catch((e) => e);
    expect(other).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe("retention", () => {
  test("kept GANTRY_STORED_RESPONSES_DAYS (30), then gone, and purged", async () => {
    const made = await alice.responses.create({ model: "gpt-test", input: "for a while" });
    clock += 29 * 86_400_000;
    expect((await alice.responses.retrieve(made.id)).id).toBe(made.id);
    clock += 2 * 86_400_000;
    expect(await alice.responses.retrieve(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    const before = await g.deps.responses.stats();
    expect(await g.deps.responses.purgeExpired(clock)).toBeGreaterThan(0);
    const after = await g.deps.responses.stats();
    expect(after.responses).toBeLessThan(before.responses);
  });
});

describe("GANTRY_STORED_RESPONSES_DAYS=0", () => {
  test("nothing is kept: not retrievable, not continuable", async () => {
    const off = await startGantry({ config: { upstreamUrl: upstream.url, storedResponsesDays: 0 } });
    try {
      const client = new OpenAI({ apiKey: await off.createKey(), baseURL: `${off.url}/v1`, maxRetries: 0 });
      const made = await client.responses.create({ model: "gpt-test", input: "not kept" });
      expect((made as { store?: boolean }).store).not.toBe(true);
      expect(await client.responses.retrieve(made.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      const err = await client.responses.create({ model: "gpt-test", input: "x", previous_response_id: made.id }).catch((e) => e);
      expect(err.code).toBe("previous_response_not_found");
      expect((await off.deps.responses.stats()).responses).toBe(0);
    } finally {
      await off.stop();
    }
  });
});
