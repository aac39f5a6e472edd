/**
 * Hardening, round two (issue 31), the gateway's bounds: what a caller may name as its model, what reaches the
 * log, and what a request may make the gateway build and send upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

async function errorOf(res: Response): Promise<{ status: number; code: string; param: string | null; message: string }> {
  const body = (await res.json()) as any;
  expect(Object.keys(body)).toEqual(["error"]);
  return { status: res.status, code: body.error.code, param: body.error.param, message: body.error.message };
}

/** Posts and checks that the upstream got nothing from it. */
async function refusedBeforeUpstream(key: string, body: unknown, path = "/v1/responses", headers: Record<string, string> = {}) {
  const before = upstream.requests.length;
  const e = await errorOf(await fetch(`${g.url}${path}`, authed(key, body, headers)));
  expect(upstream.requests.length).toBe(before);
  return e;
}

const logBytes = () => g.logs.reduce((n, l) => n + l.length, 0);

describe("model names and the log", () => {
  const huge = "m".repeat(2 * 1024 * 1024);

  test("a model name of 2 MiB is a 400 invalid_model, for a disabled key and an exhausted one too, and the log stays small", async () => {
    const disabled = await g.createKey({ status: "disabled" });
    const exhausted = await g.createKey({ quotaTokens: 0 });
    const usable = await g.createKey();
    const before = logBytes();
    for (const key of [disabled, exhausted, usable]) {
      for (const path of ["/v1/responses", "/v1/chat/completions"]) {
        const e = await refusedBeforeUpstream(key, { model: huge, input: "x", messages: [{ role: "user", content: "x" }] }, path);
        expect([e.status, e.code, e.param]).toEqual([400, "invalid_model", "model"]);
        expect(e.message.length).toBeLessThan(200);
      }
    }
    // Six refused calls: a line each, none holding the name (before: 2 MiB a line).
    expect(logBytes() - before).toBeLessThan(6 * 1024);
  });

  test("names the lists could be bypassed with are refused: spaces, look-alike letters, dot segments; case does not bypass a deny list", async () => {
    const denied = await g.createKey({ modelMode: "deny", models: ["gpt-5*"] });
    for (const model of [" gpt-5.4", "gpt-5.4 ", "gpt-5.4\n", "gpt-5.\u043e", "gpt\u20105.4", "\uff47pt-5.4", "gpt-4.1-mini/../gpt-5.4", "a//b", "/gpt-5.4", "./gpt-5.4"]) {
      const e = await refusedBeforeUpstream(denied, { model, input: "x" });
      expect([e.status, e.code, e.param]).toEqual([400, "invalid_model", "model"]);
    }
    for (const model of ["GPT-5.4", "Gpt-5.4-mini"]) {
      const e = await refusedBeforeUpstream(denied, { model, input: "x" });
      expect([e.status, e.code]).toEqual([403, "model_not_allowed"]);
    }
    const allowed = await g.createKey({ modelMode: "allow", models: ["gpt-4.1-mini*"] });
    const e = await refusedBeforeUpstream(allowed, { model: "gpt-4.1-mini/../gpt-5.4", input: "x" });
    expect([e.status, e.code]).toEqual([400, "invalid_model"]);
    // Ordinary names with the characters real ones use still pass.
    for (const model of ["gpt-4.1-mini-2025-04-14", "GPT-4.1-MINI", "gpt-4.1-mini:ft-org:abc@1+2/x_y"]) {
      const res = await fetch(`${g.url}/v1/responses`, authed(allowed, { model, input: "x" }));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });
});

describe("tools", () => {
  test("tools: [null] and other malformed tools are a 400 naming the tool, nothing sent upstream, streamed or not", async () => {
    const key = await g.createKey();
    const cases: Array<[unknown, string]> = [
      [[null], "tools[0]"],
      [[{ type: "function", name: "f", parameters: {} }, 1], "tools[1]"],
      [["web_search"], "tools[0]"],
      [[{ name: "f" }], "tools[0].type"],
      [[{ type: "" }], "tools[0].type"],
      ["x", "tools"],
      [{ type: "function" }, "tools"],
    ];
    for (const stream of [false, true]) {
      for (const [tools, param] of cases) {
        const e = await refusedBeforeUpstream(key, { model: "m", input: "x", tools, stream });
        expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", param]);
      }
    }
  });
});

describe("item_reference and previous_response_id: what is sent upstream is bounded like a body", () => {
  let small: Gantry;
  const maxBodyBytes = 64 * 1024;
  beforeAll(async () => {
    small = await startGantry({ config: { upstreamUrl: upstream.url, maxBodyBytes, maxInputItems: 30 } });
  });
  afterAll(() => small.stop());

  /** Keeps a response whose input is one message of `chars` characters; its input item's id. */
  async function keptItem(key: string, chars: number): Promise<{ itemId: string; responseId: string }> {
    const res = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", input: [{ role: "user", content: "x".repeat(chars) }] }));
    expect(res.status).toBe(200);
    const responseId = ((await res.json()) as any).id;
    const list = (await (await fetch(`${small.url}/v1/responses/${responseId}/input_items`, authed(key))).json()) as any;
    return { itemId: list.data[0].id, responseId };
  }

  test("a stored item named many times is refused before anything is built or read (400 request_too_large); each id is looked up once", async () => {
    const key = await small.createKey();
    const { itemId } = await keptItem(key, 10_000);
    const repo = small.deps.responses;
    const looked: string[][] = [];
    const items = repo.items.bind(repo);
    repo.items = (keyId, ids, now) => (looked.push([...ids]), items(keyId, ids, now));
    try {
      const before = upstream.requests.length;
      const ref = { type: "item_reference", id: itemId };
      // About 0.5 KB of request naming 10 KB twenty times: 200 KB upstream, above the 64 KiB bound.
      const res = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", input: Array(20).fill(ref) }));
      const e = await errorOf(res);
      expect([e.status, e.code, e.param]).toEqual([400, "request_too_large", "input"]);
      expect(e.message).toContain(String(maxBodyBytes));
      expect(upstream.requests.length).toBe(before);
      expect(looked).toEqual([]); // refused on the sizes alone

      // Named three times (30 KB): taken, the item read once, sent three times.
      const ok = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", input: Array(3).fill(ref), store: false }));
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      expect(looked).toEqual([[itemId]]);
      const sent = upstream.requests.at(-1)!.body.input as any[];
      expect(sent.filter((it) => JSON.stringify(it).includes("x".repeat(10_000)))).toHaveLength(3);
    } finally {
      repo.items = items;
    }
  });

  test("a continued conversation may not send more items upstream than GANTRY_MAX_INPUT_ITEMS", async () => {
    const key = await small.createKey();
    // Each kept turn is two items (its input and the echo); the bound is 30.
    let previous: string | null = null;
    for (let turn = 0; turn < 2; turn++) {
      const res: Response = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", input: "hi", ...(previous ? { previous_response_id: previous } : {}) }));
      expect(res.status).toBe(200);
      previous = ((await res.json()) as any).id;
    }
    const before = upstream.requests.length;
    const e = await errorOf(await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", previous_response_id: previous, input: Array(27).fill({ role: "user", content: "a" }) })));
    expect([e.status, e.code, e.param]).toEqual([400, "too_many_items", "previous_response_id"]);
    expect(upstream.requests.length).toBe(before);
    const ok = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", previous_response_id: previous, input: Array(26).fill({ role: "user", content: "a" }) }));
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  test("a conversation continued past the bound is refused at the turn that makes it too large", async () => {
    const key = await small.createKey();
    // The upstream echoes the input: each kept turn is about twice its input.
    const { responseId: first } = await keptItem(key, 10_000);
    const second = await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", previous_response_id: first, input: "y".repeat(10_000) }));
    expect(second.status).toBe(200);
    const secondId = ((await second.json()) as any).id;
    const before = upstream.requests.length;
    // About 20 KB + 20 KB kept, and 30 KB more: above 64 KiB, though the body alone is far below it.
    const e = await errorOf(await fetch(`${small.url}/v1/responses`, authed(key, { model: "m", previous_response_id: secondId, input: "z".repeat(30_000) })));
    expect([e.status, e.code, e.param]).toEqual([400, "request_too_large", "previous_response_id"]);
    expect(upstream.requests.length).toBe(before);
  });
});

describe("how many items a call may carry", () => {
  test("more input items or messages than GANTRY_MAX_INPUT_ITEMS (10,000 by default): 400 too_many_items, nothing sent upstream", async () => {
    const key = await g.createKey();
    const tiny = { role: "user", content: "x" };
    const over = Array(10_001).fill(tiny);
    for (const [path, body, param] of [
      ["/v1/responses", { model: "m", input: over }, "input"],
      ["/v1/responses", { model: "m", input: over, store: false }, "input"],
      ["/v1/chat/completions", { model: "m", messages: over }, "messages"],
    ] as const) {
      const e = await refusedBeforeUpstream(key, body, path);
      expect([e.status, e.code, e.param]).toEqual([400, "too_many_items", param]);
    }
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "m", input: Array(10_000).fill(tiny), store: false }));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });
});

describe("stored input items are read a page at a time", () => {
  test("input_items?limit=1 on a response of 10,000 items reads one page, not the response", async () => {
    const key = await g.createKey();
    const input = Array.from({ length: 10_000 }, (_, i) => ({ role: "user", content: `item ${i}` }));
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "m", input }));
    expect(res.status).toBe(200);
    const id = ((await res.json()) as any).id;
    const repo = g.deps.responses;
    const get = repo.get.bind(repo);
    let whole = 0;
    repo.get = (...args) => (whole++, get(...args));
    try {
      const page = (await (await fetch(`${g.url}/v1/responses/${id}/input_items?limit=1`, authed(key))).json()) as any;
      expect(page.data.map((it: any) => it.content[0].text)).toEqual(["item 9999"]);
      expect(page.has_more).toBe(true);
      const next = (await (await fetch(`${g.url}/v1/responses/${id}/input_items?order=asc&limit=2&after=${page.data[0].id}`, authed(key))).json()) as any;
      expect(next).toMatchObject({ data: [], has_more: false });
      expect(whole).toBe(0);
    } finally {
      repo.get = get;
    }
  });
});

describe("a stored response is retrieved without its input items", () => {
  test("GET /v1/responses/{id} of a response with 5,000 input items reads none of them", async () => {
    const key = await g.createKey();
    const input = Array.from({ length: 5_000 }, (_, i) => ({ role: "user", content: `item ${i}` }));
    const kept = (await (await fetch(`${g.url}/v1/responses`, authed(key, { model: "m", input }))).json()) as any;
    const repo = g.deps.responses;
    const [get, inputItems] = [repo.get.bind(repo), repo.inputItems.bind(repo)];
    let reads = 0;
    repo.get = (...args) => (reads++, get(...args));
    repo.inputItems = (...args) => (reads++, inputItems(...args));
    try {
      const res = await fetch(`${g.url}/v1/responses/${kept.id}`, authed(key));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(kept);
      expect(reads).toBe(0);
    } finally {
      repo.get = get;
      repo.inputItems = inputItems;
    }
  });
});

describe("what one key may keep", () => {
  test("past GANTRY_STORED_RESPONSES_PER_KEY the key's oldest responses go; other keys keep theirs", async () => {
    const capped = await startGantry({ config: { upstreamUrl: upstream.url, storedResponsesPerKey: 3 } });
    try {
      const [a, b] = [await capped.createKey(), await capped.createKey()];
      const keep = async (key: string) => ((await (await fetch(`${capped.url}/v1/responses`, authed(key, { model: "m", input: "hi" }))).json()) as any).id as string;
      const bs = [await keep(b)];
      const as: string[] = [];
      for (let i = 0; i < 5; i++) as.push(await keep(a));
      bs.push(await keep(b));
      const status = async (key: string, id: string) => (await fetch(`${capped.url}/v1/responses/${id}`, authed(key))).status;
      expect(await Promise.all(as.map((id) => status(a, id)))).toEqual([404, 404, 200, 200, 200]);
      expect(await Promise.all(bs.map((id) => status(b, id)))).toEqual([200, 200]);
      // The oldest kept one can be continued; the evicted one cannot.
      const gone = await errorOf(await fetch(`${capped.url}/v1/responses`, authed(a, { model: "m", input: "x", previous_response_id: as[0] })));
      expect(gone.code).toBe("previous_response_not_found");
    } finally {
      await capped.stop();
    }
  });
});
