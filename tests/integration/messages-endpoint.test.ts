/**
 * POST /v1/messages against a running Gantry and the fake upstream: Anthropic's stream and one message, the key in
 * x-api-key or as a bearer token, a tool round trip, stop sequences, thinking carried across turns, errors in
 * Anthropic's envelope with request-id, the key's limits, and the ledger billing the call once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { encryptedContentOf } from "../../src/gateway/translate/messages/thinking-signature";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  key = await g.createKey({ name: "messages-main" });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

async function withScenario<T>(s: Scenario | ((body: any) => Scenario), fn: () => Promise<T>): Promise<T> {
  upstream.setScenario(s);
  try {
    return await fn();
  } finally {
    upstream.setScenario();
  }
}

function post(body: unknown, headers: Record<string, string> = { "x-api-key": key }, path = "/v1/messages?beta=true"): Promise<Response> {
  return fetch(g.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** An Anthropic SSE body as {event, data} pairs. */
async function events(res: Response): Promise<Array<{ event: string; data: any }>> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((b) => b.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))!.slice(7);
      const data = JSON.parse(lines.find((l) => l.startsWith("data: "))!.slice(6));
      return { event, data };
    });
}

const base = { model: "gpt-5", max_tokens: 256 };
const hi = [{ role: "user", content: "hi" }];

describe("the dialect", () => {
  test("stream: Anthropic's events with the upstream's text, request-id on the reply", async () => {
    const res = await withScenario({ kind: "text", text: "Hello from the fake upstream" }, () => post({ ...base, stream: true, messages: hi }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    expect(res.headers.get("request-id")).toBe(res.headers.get("x-request-id"));
    const evs = await events(res);
    expect(evs[0].event).toBe("message_start");
    expect(evs[0].data.message.model).toBe("gpt-5");
    expect(evs[0].data.message.id).toMatch(/^msg_/);
    const text = evs.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join("");
    expect(text).toBe("Hello from the fake upstream");
    expect(evs.at(-2)!.data.delta.stop_reason).toBe("end_turn");
    expect(evs.at(-1)!.event).toBe("message_stop");
  });

  test("non-stream on /messages, key as a bearer token: one message", async () => {
    const res = await withScenario({ kind: "text", text: "Just one", usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 4 } }, () =>
      post({ ...base, messages: hi }, { authorization: `Bearer ${key}` }, "/messages"),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const body = await res.json();
    expect(body).toMatchObject({ type: "message", role: "assistant", model: "gpt-5", content: [{ type: "text", text: "Just one" }], stop_reason: "end_turn", stop_sequence: null });
    expect(body.usage).toMatchObject({ input_tokens: 20, cache_read_input_tokens: 10, output_tokens: 4 });
  });

  test("what goes upstream: instructions from system and the system turn, user hashed, the bound, no top_k or stop", async () => {
    await post({
      ...base,
      system: [{ type: "text", text: "Sys A", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "system", content: "Sys B" }, ...hi],
      metadata: { user_id: JSON.stringify({ device_id: "x".repeat(80) }) },
      top_k: 5,
      stop_sequences: ["zz"],
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
    });
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.instructions).toBe("Sys A\n\nSys B");
    expect(sent.user).toMatch(/^[0-9a-f]{64}$/);
    expect(sent.max_output_tokens).toBe(256);
    for (const field of ["top_k", "stop", "stop_sequences", "context_management", "metadata", "system", "messages"]) expect(field in sent).toBe(false);
    expect(sent.stream).toBe(true);
  });

  test("a tool round trip: tool_use out, tool_result back as function_call_output", async () => {
    const tools = [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
    const first = await withScenario({ kind: "calls", calls: [{ name: "get_weather", arguments: '{"city":"Paris"}', callId: "call_w1" }] }, () =>
      post({ ...base, stream: true, tools, messages: [{ role: "user", content: "Weather in Paris?" }] }),
    );
    const evs = await events(first);
    const start = evs.find((e) => e.data.content_block?.type === "tool_use")!;
    expect(start.data.content_block).toEqual({ type: "tool_use", id: "call_w1", name: "get_weather", input: {} });
    expect(evs.filter((e) => e.data.delta?.type === "input_json_delta").map((e) => e.data.delta.partial_json).join("")).toBe('{"city":"Paris"}');
    expect(evs.at(-2)!.data.delta.stop_reason).toBe("tool_use");
    expect(upstream.requests.at(-1)!.body.tools[0]).toMatchObject({ type: "function", name: "get_weather", strict: false });

    const second = await withScenario({ kind: "text", text: "It is 18°C." }, () =>
      post({
        ...base,
        tools,
        messages: [
          { role: "user", content: "Weather in Paris?" },
          { role: "assistant", content: [{ type: "tool_use", id: "call_w1", name: "get_weather", input: { city: "Paris" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_w1", content: "18°C, sunny" }] },
        ],
      }),
    );
    expect(second.status).toBe(200);
    expect((await second.json()).content).toEqual([{ type: "text", text: "It is 18°C." }]);
    const input = upstream.requests.at(-1)!.body.input;
    expect(input).toContainEqual({ type: "function_call", call_id: "call_w1", name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(input).toContainEqual({ type: "function_call_output", call_id: "call_w1", output: "18°C, sunny" });
  });

  test("stop_sequences: the stream is cut at the sequence across deltas, and so is one message", async () => {
    const scenario: Scenario = { kind: "text", text: "alpha beta ###END### gamma delta", deltas: 16 };
    const streamed = await withScenario(scenario, () => post({ ...base, stream: true, stop_sequences: ["###END###"], messages: hi }));
    const evs = await events(streamed);
    expect(evs.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join("")).toBe("alpha beta ");
    expect(evs.at(-2)!.data.delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "###END###" });
    const whole = await withScenario(scenario, () => post({ ...base, stop_sequences: ["###END###"], messages: hi }));
    const body = await whole.json();
    expect(body.content).toEqual([{ type: "text", text: "alpha beta " }]);
    expect(body.stop_reason).toBe("stop_sequence");
    expect(body.stop_sequence).toBe("###END###");
  });

  test("thinking: reasoning comes back signed, and the signed block goes back upstream as its encrypted reasoning", async () => {
    const res = await withScenario({ kind: "reasoning-call", reasoning: "Consider the weather", encrypted: true }, () =>
      post({ ...base, thinking: { type: "adaptive" }, output_config: { effort: "high" }, tools: [{ name: "lookup", input_schema: { type: "object", properties: { q: { type: "string" } } } }], messages: hi }),
    );
    expect(upstream.requests.at(-1)!.body.reasoning).toEqual({ effort: "high", summary: "auto" });
    const body = await res.json();
    const thinking = body.content.find((b: any) => b.type === "thinking");
    expect(thinking.thinking).toBe("Consider the weather");
    expect(encryptedContentOf(thinking.signature)).toBe("gAAAABfake-encrypted-reasoning");
    const toolUse = body.content.find((b: any) => b.type === "tool_use");

    const next = await post({
      ...base,
      thinking: { type: "adaptive" },
      tools: [{ name: "lookup", input_schema: { type: "object", properties: { q: { type: "string" } } } }],
      messages: [...hi, { role: "assistant", content: body.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "found" }] }],
    });
    expect(next.status).toBe(200);
    const input = upstream.requests.at(-1)!.body.input;
    expect(input).toContainEqual({ type: "reasoning", summary: [{ type: "summary_text", text: "Consider the weather" }], encrypted_content: "gAAAABfake-encrypted-reasoning" });
  });

  test("an upstream failure mid-stream is an in-band error event", async () => {
    const res = await withScenario({ kind: "failed", code: "server_error", message: "The model crashed", text: "partial" }, () => post({ ...base, stream: true, messages: hi }));
    expect(res.status).toBe(200);
    const evs = await events(res);
    expect(evs.at(-1)).toEqual({ event: "error", data: { type: "error", error: { type: "api_error", message: "The model crashed" } } });
  });

  test("ping keep-alives while the upstream is silent", async () => {
    const quick = await startGantry({ config: { upstreamUrl: upstream.url, keepAliveSeconds: 0.05 } });
    try {
      const k = await quick.createKey();
      const res = await withScenario({ kind: "slow", delayMs: 300, text: "a b", deltas: 2 }, () =>
        fetch(`${quick.url}/v1/messages`, { method: "POST", headers: { "x-api-key": k, "content-type": "application/json" }, body: JSON.stringify({ ...base, stream: true, messages: hi }) }),
      );
      const evs = await events(res);
      expect(evs.some((e) => e.event === "ping" && e.data.type === "ping")).toBe(true);
      expect(evs.at(-1)!.event).toBe("message_stop");
    } finally {
      await quick.stop();
    }
  });

  test("HEAD / (Claude Code's first request) answers harmlessly", async () => {
    const res = await fetch(g.url + "/", { method: "HEAD" });
    expect(res.status).toBeLessThan(500);
    expect(await res.text()).toBe("");
  });
});

describe("shared behaviour of the exchange", () => {
  const MARKUP = '<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>';
  const tools = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];

  test("tool markup in the text is cleaned, and markup naming an offered tool becomes a tool_use block", async () => {
    const scenario: Scenario = { kind: "markup", text: `Let me check. ${MARKUP} Done.`, deltas: 40 };
    const plain = await withScenario(scenario, () => post({ ...base, stream: true, messages: hi }));
    const text = (await events(plain)).filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join("");
    expect(text).toBe("Let me check.  Done.");
    const offered = await withScenario(scenario, () => post({ ...base, tools, messages: hi }));
    const body = await offered.json();
    expect(body.content.find((b: any) => b.type === "tool_use")).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
    expect(body.stop_reason).toBe("tool_use");
  });

  test("a parameter the upstream refuses (temperature) is dropped and the call answered, as for every dialect", async () => {
    const picky = await startFakeUpstream({ unsupportedParams: ["temperature"], scenario: { kind: "text", text: "fine" } });
    const gp = await startGantry({ config: { upstreamUrl: picky.url } });
    try {
      const res = await fetch(`${gp.url}/v1/messages`, { method: "POST", headers: { "x-api-key": await gp.createKey(), "content-type": "application/json" }, body: JSON.stringify({ ...base, temperature: 0.3, top_p: 0.5, messages: hi }) });
      expect(res.status).toBe(200);
      expect((await res.json()).content).toEqual([{ type: "text", text: "fine" }]);
      const last = picky.requests.at(-1)!.body;
      expect("temperature" in last).toBe(false);
      expect(last.top_p).toBe(0.5);
    } finally {
      await gp.stop();
      await picky.close();
    }
  });

  test("a body over the limit: 413 request_too_large", async () => {
    const res = await post({ ...base, messages: [{ role: "user", content: "x".repeat(g.config.maxBodyBytes + 10) }] });
    expect(res.status).toBe(413);
    expect((await res.json()).error.type).toBe("request_too_large");
  });

  test("a request shaped as Claude Code sends it is accepted", async () => {
    const schema = (i: number) => ({ type: "object", properties: { [`arg${i}`]: { type: "string", description: "d".repeat(200) } }, required: [`arg${i}`], additionalProperties: false, $schema: "http://json-schema.org/draft-07/schema#" });
    const body = {
      model: "claude-opus-4-1",
      max_tokens: 64000,
      stream: true,
      system: [
        { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "s".repeat(30_000), cache_control: { type: "ephemeral" } },
      ],
      messages: [
        { role: "system", content: "<system-reminder>context</system-reminder>" },
        { role: "user", content: [{ type: "text", text: "<system-reminder>x</system-reminder>" }, { type: "text", text: "list the files", cache_control: { type: "ephemeral" } }] },
      ],
      tools: Array.from({ length: 24 }, (_, i) => ({ name: `Tool${i}`, description: "t".repeat(1000), input_schema: schema(i) })),
      thinking: { type: "adaptive" },
      output_config: { effort: "medium" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      metadata: { user_id: JSON.stringify({ device_id: "f".repeat(64), account_uuid: "", session_id: crypto.randomUUID() }) },
      temperature: 1,
    };
    const res = await withScenario({ kind: "text", text: "Here are the files." }, () =>
      post(body, { "x-api-key": key, "x-app": "cli", "x-claude-code-session-id": crypto.randomUUID(), "user-agent": "claude-cli/2.0.0 (external, cli)" }),
    );
    expect(res.status).toBe(200);
    const evs = await events(res);
    expect(evs.at(-1)!.event).toBe("message_stop");
    expect(evs[0].data.message.model).toBe("claude-opus-4-1");
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.tools).toHaveLength(24);
    expect(sent.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(sent.max_output_tokens).toBe(64000);
    expect(sent.instructions).toStartWith("You are Claude Code");
    expect(sent.instructions).toEndWith("<system-reminder>context</system-reminder>");
  });
});

describe("errors in Anthropic's envelope", () => {
  async function envelope(res: Response, status: number, type: string): Promise<string> {
    expect(res.status).toBe(status);
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const body = await res.json();
    expect(body).toEqual({ type: "error", error: { type, message: expect.any(String) } });
    return body.error.message;
  }

  test("no key, a wrong key: 401 authentication_error", async () => {
    expect(await envelope(await post({ ...base, messages: hi }, {}), 401, "authentication_error")).toContain("x-api-key");
    await envelope(await post({ ...base, messages: hi }, { "x-api-key": "gk-not-a-key" }), 401, "authentication_error");
  });

  test("bad input: 400 invalid_request_error, never a crash", async () => {
    await envelope(await post({ ...base, messages: [] }), 400, "invalid_request_error");
    await envelope(await post({ ...base, messages: [{ role: "user", content: [{ type: "hologram" }] }] }), 400, "invalid_request_error");
    await envelope(await post({ ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }] }), 400, "invalid_request_error");
    await envelope(await post({ ...base, max_tokens: "lots", messages: hi }), 400, "invalid_request_error");
    await envelope(await post("{not json"), 400, "invalid_request_error");
    await envelope(await post([1, 2]), 400, "invalid_request_error");
  });

  test("max_tokens over the key's bound: 400 invalid_request_error naming max_tokens", async () => {
    const bounded = await g.createKey({ maxTokens: 100 });
    const message = await envelope(await post({ ...base, max_tokens: 64000, messages: hi }, { "x-api-key": bounded }), 400, "invalid_request_error");
    expect(message).toContain("max_tokens");
  });

  test("a model the key may not use: 403 permission_error", async () => {
    const narrow = await g.createKey({ modelMode: "allow", models: ["other-*"] });
    await envelope(await post({ ...base, messages: hi }, { "x-api-key": narrow }), 403, "permission_error");
  });

  test("rate limit: 429 rate_limit_error with retry-after", async () => {
    const limited = await g.createKey({ rpm: 1 });
    expect((await post({ ...base, messages: hi }, { "x-api-key": limited })).status).toBe(200);
    const res = await post({ ...base, messages: hi }, { "x-api-key": limited });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    await envelope(res, 429, "rate_limit_error");
  });

  test("the upstream overloaded (503): 529 overloaded_error; failing (500): api_error", async () => {
    const overloaded = await withScenario({ kind: "status", status: 503 }, () => post({ ...base, messages: hi }));
    await envelope(overloaded, 529, "overloaded_error");
    const failing = await withScenario({ kind: "status", status: 500 }, () => post({ ...base, stream: true, messages: hi }));
    await envelope(failing, 502, "api_error");
  });
});

describe("billing", () => {
  test("a call is billed once, under the messages endpoint, with the upstream's usage", async () => {
    const name = `messages-billing-${crypto.randomUUID()}`;
    const k = await g.createKey({ name });
    const id = (await g.deps.keys.get(name))!.id;
    for (const stream of [true, false]) {
      const res = await withScenario({ kind: "text", text: "count me", usage: { input_tokens: 11, output_tokens: 2 } }, () =>
        post({ ...base, stream, messages: hi }, { "x-api-key": k }),
      );
      await res.text();
    }
    const rows = await g.deps.ledger.recent(10, id);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ endpoint: "messages", status: 200, inputTokens: 11, outputTokens: 2, model: "gpt-5" });
  });
});
