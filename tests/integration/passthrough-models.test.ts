/** Raw passthrough, the live model list, health endpoints and bad input over real HTTP. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let clock = Date.parse("2026-06-01T00:00:00Z");

beforeAll(async () => {
  upstream = await startFakeUpstream({ lenient: true });
  g = await startGantry({ config: { upstreamUrl: upstream.url, maxBodyBytes: 64 * 1024 }, now: () => clock });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

describe("raw passthrough", () => {
  const raw = { "x-upstream-mode": "raw" };

  test("the body reaches the upstream byte for byte, without normalisation", async () => {
    const key = await g.createKey();
    const text = `{"model":"demo-mini","stream":true,  "input":[{"role":"system","content":[{"type":"input_text","text":"sys"}]}],"custom_field":{"a":1}}`;
    const n = upstream.requests.length;
    const res = await fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...raw }, body: text });
    expect(res.status).toBe(200);
    await res.text();
    const seen = upstream.requests[n];
    expect(seen.body).toEqual(JSON.parse(text));
    expect(seen.body.instructions).toBeUndefined(); // no default instructions in raw mode
    expect(seen.body.input[0].role).toBe("system"); // not turned into developer
    expect(seen.headers.authorization).toBe("Bearer upstream-secret-key"); // the caller's key never goes upstream
  });

  test("the upstream's refusal comes back untouched, status and body", async () => {
    const strict = await startFakeUpstream();
    const s = await startGantry({ config: { upstreamUrl: strict.url } });
    try {
      const key = await s.createKey();
      const res = await fetch(`${s.url}/responses`, authed(key, { model: "demo-mini", stream: false, input: "x" }, { "x-upstream-raw-passthrough": "true" }));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: "Stream must be set to true" });
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    } finally {
      await s.stop();
      await strict.close();
    }
  });

  test("the stream's usage is still settled: passthrough never bypasses quota", async () => {
    upstream.setScenario({ kind: "text", text: "raw reply", usage: { input_tokens: 7, output_tokens: 11, total_tokens: 18 } });
    const name = `raw-${Math.random()}`;
    const key = await g.createKey({ name, quotaTokens: 20 });
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", stream: true, input: "x" }, raw));
    const body = await res.text();
    expect(body).toContain("event: response.completed");
    expect(body).not.toContain("[DONE]");
    // No wait: the usage is settled before the stream's last byte left the server (gateway/call.ts).
    const id = (await g.deps.keys.get(name))!.id;
    expect((await g.deps.keys.usage(id)).tokens).toBe(18);
    expect((await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", stream: true, input: "x" }, raw))).status).toBe(200);
    const refused = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", stream: true, input: "x" }, raw));
    expect(refused.status).toBe(429);
    upstream.setScenario();
  });

  test("the key's max-tokens bound holds in raw mode: sent when the body has none (or null), a larger value refused", async () => {
    const key = await g.createKey({ maxTokens: 50 });
    const text = `{"model":"demo-mini","stream":true,"input":"x","custom_field":{"a":1}}\n`;
    const cases: Array<[string, unknown]> = [
      [text, { ...JSON.parse(text), max_output_tokens: 50 }],
      [`{"model":"demo-mini","input":"x","max_output_tokens":null}`, { model: "demo-mini", input: "x", max_output_tokens: 50 }],
      [`{"model":"demo-mini","input":"x","max_output_tokens":20}`, { model: "demo-mini", input: "x", max_output_tokens: 20 }],
    ];
    for (const [body, sent] of cases) {
      const n = upstream.requests.length;
      const res = await fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...raw }, body });
      expect(res.status).toBe(200);
      await res.text();
      expect(upstream.requests[n]!.body).toEqual(sent);
    }
    const n = upstream.requests.length;
    const over = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x", max_output_tokens: 51 }, raw));
    expect(over.status).toBe(400);
    expect((await over.json()).error).toMatchObject({ code: "max_tokens_exceeded", param: "max_output_tokens" });
    expect(upstream.requests.length).toBe(n);
    // Without a bound on the key, the body goes as it came.
    const free = await g.createKey();
    const res = await fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${free}`, ...raw }, body: text });
    await res.text();
    expect(upstream.requests.at(-1)!.body).toEqual(JSON.parse(text));
  });

  test("admission applies in raw mode too", async () => {
    const key = await g.createKey({ modelMode: "allow", models: ["other"] });
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x" }, raw));
    expect(res.status).toBe(403);
  });
});

describe("model list", () => {
  test("live from upstream, filtered by the key's permission, on both paths", async () => {
    upstream.setModels(["m-alpha", "m-beta", "x-gamma"]);
    clock += 60_000;
    const key = await g.createKey({ modelMode: "allow", models: ["m-*"] });
    for (const path of ["/v1/models", "/models"]) {
      const res = await fetch(g.url + path, authed(key));
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.object).toBe("list");
      expect(body.data.map((m: any) => m.id)).toEqual(["m-alpha", "m-beta"]);
    }
  });

  test("a change upstream shows within 15 s, and not before the cache expires", async () => {
    const key = await g.createKey();
    upstream.setModels(["one"]);
    clock += 60_000;
    const ids = async () => ((await (await fetch(`${g.url}/v1/models`, authed(key))).json()) as any).data.map((m: any) => m.id);
    expect(await ids()).toEqual(["one"]);
    upstream.setModels(["one", "two"]);
    clock += 5_000;
    expect(await ids()).toEqual(["one"]);
    clock += 6_000;
    expect(await ids()).toEqual(["one", "two"]);
  });

  test("upstream failure is a 502 envelope", async () => {
    const dead = await startGantry({ config: { upstreamUrl: "http://127.0.0.1:9/v1" } });
    try {
      const res = await fetch(`${dead.url}/v1/models`, authed(await dead.createKey()));
      expect(res.status).toBe(502);
      expect(((await res.json()) as any).error.code).toBe("upstream_unavailable");
    } finally {
      await dead.stop();
    }
  });
});

describe("health", () => {
  test("healthz and readyz", async () => {
    expect(await (await fetch(`${g.url}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = (await (await fetch(`${g.url}/readyz`)).json()) as any;
    expect(ready.status).toBe("ready");
  });
});

describe("bad input gets a 4xx envelope, never a 500", () => {
  const cases: Array<[string, RequestInit | ((key: string) => RequestInit), number, string]> = [
    ["malformed Authorization", { method: "POST", headers: { authorization: "Token abc" }, body: "{}" }, 401, "missing_api_key"],
    ["empty bearer", { method: "POST", headers: { authorization: "Bearer " }, body: "{}" }, 401, "missing_api_key"],
    ["non-JSON body", (k) => ({ method: "POST", headers: { authorization: `Bearer ${k}` }, body: "{nope" }), 400, "invalid_json"],
    ["empty body", (k) => ({ method: "POST", headers: { authorization: `Bearer ${k}` }, body: "" }), 400, "invalid_json"],
    ["JSON array body", (k) => ({ method: "POST", headers: { authorization: `Bearer ${k}` }, body: "[1,2]" }), 400, "invalid_json"],
    ["model of the wrong type", (k) => authed(k, { model: 5, input: "x" }), 400, "invalid_request"],
    ["stream of the wrong type", (k) => authed(k, { model: "m", stream: "yes", input: "x" }), 400, "invalid_request"],
    ["max_output_tokens of the wrong type", (k) => authed(k, { model: "m", max_output_tokens: "10", input: "x" }), 400, "invalid_request"],
    ["negative max_output_tokens", (k) => authed(k, { model: "m", max_output_tokens: -1, input: "x" }), 400, "invalid_request"],
    ["oversized body", (k) => authed(k, { model: "m", input: "x".repeat(70 * 1024) }), 413, "body_too_large"],
    ["invalid UTF-8", (k) => ({ method: "POST", headers: { authorization: `Bearer ${k}` }, body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }), 400, "invalid_json"],
  ];
  for (const [name, init, status, code] of cases) {
    test(name, async () => {
      const key = await g.createKey();
      const res = await fetch(`${g.url}/v1/responses`, typeof init === "function" ? init(key) : init);
      expect(res.status).toBe(status);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe(code);
      expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
    });
  }

  test("chat: messages of the wrong shape", async () => {
    const key = await g.createKey();
    for (const body of [{ model: "m", messages: "hi" }, { model: "m", messages: [{ content: "no role" }] }, { model: "m" }]) {
      const res = await fetch(`${g.url}/v1/chat/completions`, authed(key, body));
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.type).toBe("invalid_request_error");
    }
  });
});
