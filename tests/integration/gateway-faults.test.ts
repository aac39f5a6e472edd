/**
 * Upstream faults through both conversation endpoints, streamed and not: before any byte reached the caller
 * they are an HTTP status with the error envelope; after, they are delivered in-band (Responses: a
 * `response.failed` with the next sequence_number; chat: an error frame, then [DONE]) and never look like a
 * clean finish. After every fault the key's lease is back, the ledger has the outcome, and the server serves on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { authed, readSseData, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url, upstreamFirstByteTimeoutMs: 300 } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

interface Endpoint {
  name: string;
  path: string;
  ledgerName: string;
  body(stream: boolean): Record<string, unknown>;
}

const RESPONSES: Endpoint = {
  name: "responses",
  path: "/v1/responses",
  ledgerName: "responses",
  body: (stream) => ({ model: "demo-mini", input: "hello", stream }),
};
const CHAT: Endpoint = {
  name: "chat",
  path: "/v1/chat/completions",
  ledgerName: "chat.completions",
  body: (stream) => ({
    model: "demo-mini",
    messages: [{ role: "user", content: "hello" }],
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  }),
};
const ENDPOINTS = [RESPONSES, CHAT];
const MODES = [true, false];

async function newKey(server: Gantry = g): Promise<{ key: string; id: string }> {
  const name = `fault-${Math.random().toString(36).slice(2)}`;
  const key = await server.createKey({ name });
  return { key, id: (await server.deps.keys.get(name))!.id };
}

async function envelope(res: Response) {
  const body = (await res.json()) as any;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.type).toBe("string");
  return body.error as { message: string; type: string; code: string; param: string | null };
}

/**
 * The lease is back, the ledger row says what happened, and the next request on the same server succeeds.
 * Checked at once, with no wait and no flush: a call is settled before its reply's last byte leaves
 * (gateway/call.ts), and a caller that went away has been waited for by the test itself.
 */
async function expectSettled(server: Gantry, up: FakeUpstream, key: string, id: string, ep: Endpoint, status: number, code: string | null) {
  expect(server.deps.limiter.inFlight(id)).toBe(0);
  const row = (await server.deps.ledger.recent(1, id))[0];
  expect(row).toMatchObject({ keyId: id, endpoint: ep.ledgerName, status, errorCode: code });
  up.setScenario();
  const next = await fetch(`${server.url}${ep.path}`, authed(key, ep.body(false)));
  expect(next.status).toBe(200);
  await next.text();
  expect(server.deps.limiter.inFlight(id)).toBe(0);
  return row;
}

describe("before any byte reached the caller: a status and the envelope", () => {
  const cases: Array<{ name: string; scenario: Scenario; status: number; code: string; check?: (res: Response, e: any) => void }> = [
    { name: "upstream 500 -> 502", scenario: { kind: "status", status: 500 }, status: 502, code: "upstream_error" },
    { name: "upstream 502 (HTML) -> 502", scenario: { kind: "status", status: 502 }, status: 502, code: "upstream_error" },
    { name: "upstream 503 -> 502", scenario: { kind: "status", status: 503 }, status: 502, code: "upstream_error" },
    {
      name: "upstream 429 -> 429 with its Retry-After",
      scenario: { kind: "status", status: 429, headers: { "retry-after": "7" } },
      status: 429,
      code: "rate_limit_exceeded",
      check: (res, e) => {
        expect(res.headers.get("retry-after")).toBe("7");
        expect(e.message).toContain("Rate limit reached");
      },
    },
    {
      name: 'upstream 400 {"detail"} -> 400 with the upstream\'s message',
      scenario: { kind: "status", status: 400, body: { detail: "Unsupported parameter: 'frobnicate'." } },
      status: 400,
      code: "upstream_invalid_request",
      check: (_res, e) => {
        expect(e.message).toBe("Unsupported parameter: 'frobnicate'.");
        expect(e.type).toBe("invalid_request_error");
      },
    },
    {
      name: 'upstream 400 {"error"} -> 400 with its code and param',
      scenario: {
        kind: "status",
        status: 400,
        body: { error: { message: "Invalid 'input[0]'.", type: "invalid_request_error", param: "input[0]", code: "invalid_value" } },
      },
      status: 400,
      code: "invalid_value",
      check: (_res, e) => {
        expect(e.message).toBe("Invalid 'input[0]'.");
        expect(e.param).toBe("input[0]");
      },
    },
    {
      name: "upstream 401 -> 502 (the gateway's credential, not the caller's)",
      scenario: { kind: "status", status: 401 },
      status: 502,
      code: "upstream_error",
      check: (_res, e) => expect(e.message).toContain("401"),
    },
  ];
  for (const ep of ENDPOINTS) {
    for (const stream of MODES) {
      for (const c of cases) {
        test(`${ep.name}, stream:${stream}: ${c.name}`, async () => {
          upstream.setScenario(c.scenario);
          const { key, id } = await newKey();
          const res = await fetch(`${g.url}${ep.path}`, authed(key, ep.body(stream)));
          expect(res.status).toBe(c.status);
          expect(res.headers.get("content-type")).toContain("application/json");
          expect(res.headers.get("x-request-id")).toMatch(/^req_/);
          const e = await envelope(res);
          expect(e.code).toBe(c.code);
          c.check?.(res, e);
          await expectSettled(g, upstream, key, id, ep, c.status, c.code);
        });
      }
    }
  }

  test("a refused connection -> 502 upstream_unavailable, on both endpoints and modes", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const deadPort = probe.port;
    await probe.stop(true);
    const s = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${deadPort}/v1` } });
    try {
      for (const ep of ENDPOINTS) {
        for (const stream of MODES) {
          const { key, id } = await newKey(s);
          const res = await fetch(`${s.url}${ep.path}`, authed(key, ep.body(stream)));
          expect(res.status).toBe(502);
          expect((await envelope(res)).code).toBe("upstream_unavailable");
          expect(s.deps.limiter.inFlight(id)).toBe(0);
          expect((await s.deps.ledger.recent(1, id))[0]).toMatchObject({ status: 502, errorCode: "upstream_unavailable", endpoint: ep.ledgerName });
        }
      }
    } finally {
      await s.stop();
    }
  });

  test("an upstream that never answers -> 504 after the first-byte timeout, on both endpoints and modes", async () => {
    upstream.setScenario({ kind: "hang-before-headers" });
    const results = await Promise.all(
      ENDPOINTS.flatMap((ep) =>
        MODES.map(async (stream) => {
          const { key, id } = await newKey();
          const t0 = performance.now();
          const res = await fetch(`${g.url}${ep.path}`, authed(key, ep.body(stream)));
          const elapsed = performance.now() - t0;
          return { ep, key, id, res, elapsed, e: await envelope(res) };
        }),
      ),
    );
    for (const r of results) {
      expect(r.res.status).toBe(504);
      expect(r.e.code).toBe("upstream_timeout");
      expect(r.elapsed).toBeGreaterThanOrEqual(250);
      expect(r.elapsed).toBeLessThan(2000);
    }
    // The upstream sees the gateway give up over its own connection, a moment after the caller got its 504.
    await pollUntil(() => upstream.open === 0, Boolean, { what: "the upstream requests to be closed" });
    for (const r of results) await expectSettled(g, upstream, r.key, r.id, r.ep, 504, "upstream_timeout");
  });
});

describe("after the stream started: in-band failure, never a clean finish", () => {
  const cases: Array<{ name: string; scenario: Scenario; status: number; code: string; message?: string; settlesUsage?: boolean }> = [
    { name: "connection reset mid-stream", scenario: { kind: "reset-mid-stream", afterEvents: 5 }, status: 502, code: "upstream_stream_error" },
    { name: "malformed event", scenario: { kind: "malformed", afterEvents: 5 }, status: 502, code: "upstream_stream_error" },
    { name: "error event (flat), then response.failed", scenario: { kind: "error-event", nested: false, code: "server_error" }, status: 502, code: "server_error" },
    { name: "error event (nested), then response.failed", scenario: { kind: "error-event", nested: true, code: "server_error" }, status: 502, code: "server_error" },
    {
      // The ledger and a streaming chat caller read it alike: one reading of upstream events.
      name: "error event given as a plain string, then response.failed",
      scenario: { kind: "error-event", nested: false, form: "string", code: "upstream_error", message: "boom" },
      status: 502,
      code: "upstream_error",
      message: "boom",
    },
    {
      name: "error event and then the end of the stream",
      scenario: { kind: "error-event", nested: true, code: "server_error", terminal: false },
      status: 502,
      code: "server_error",
    },
    {
      name: "response.failed after some text",
      scenario: { kind: "failed", code: "server_error", text: "partial answer" },
      status: 502,
      code: "server_error",
      settlesUsage: true,
    },
    {
      name: "response.failed for a caller fault (context_length_exceeded)",
      scenario: { kind: "failed", code: "context_length_exceeded", message: "Your input exceeds the context window of this model." },
      status: 400,
      code: "context_length_exceeded",
    },
    {
      name: "response.failed for an upstream rate limit",
      scenario: { kind: "failed", code: "rate_limit_exceeded", message: "Rate limit reached. Please try again in 2s." },
      status: 429,
      code: "rate_limit_exceeded",
    },
    { name: "stream ends without a terminal event", scenario: { kind: "no-terminal", text: "cut short" }, status: 502, code: "stream_incomplete" },
  ];

  for (const c of cases) {
    test(`responses, stream:true: ${c.name}`, async () => {
      upstream.setScenario(c.scenario);
      const { key, id } = await newKey();
      const res = await fetch(`${g.url}${RESPONSES.path}`, authed(key, RESPONSES.body(true)));
      expect(res.status).toBe(200);
      const events = await readSseData(res);
      expect(events).not.toContain("[DONE]");
      // One sequence, no gaps: the failure event takes the next number.
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const last = events.at(-1);
      expect(last.type).toBe("response.failed");
      expect(last.response.status).toBe("failed");
      expect(last.response.error.code).toBe(c.code);
      expect(typeof last.response.error.message).toBe("string");
      expect(events.some((e) => e.type === "response.completed")).toBe(false);
      const row = await expectSettled(g, upstream, key, id, RESPONSES, c.status, c.code);
      if (c.settlesUsage) expect(row.inputTokens).toBeGreaterThan(0);
    });

    // Not kept (store: false), the stream is forwarded unparsed: the failure still takes the next number.
    test(`responses, stream:true, store:false: ${c.name}`, async () => {
      upstream.setScenario(c.scenario);
      const { key } = await newKey();
      const res = await fetch(`${g.url}${RESPONSES.path}`, authed(key, { ...RESPONSES.body(true), store: false }));
      expect(res.status).toBe(200);
      const events = await readSseData(res);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.at(-1).type).toBe("response.failed");
    });

    test(`chat, stream:true: ${c.name}`, async () => {
      upstream.setScenario(c.scenario);
      const { key, id } = await newKey();
      const res = await fetch(`${g.url}${CHAT.path}`, authed(key, CHAT.body(true)));
      expect(res.status).toBe(200);
      const frames = await readSseData(res);
      expect(frames.at(-1)).toBe("[DONE]");
      expect(frames.filter((f) => f === "[DONE]")).toHaveLength(1);
      const error = frames.at(-2);
      expect(error.error).toMatchObject({ code: c.code });
      expect(typeof error.error.message).toBe("string");
      if (c.message) expect(error.error.message).toBe(c.message);
      const chunks = frames.filter((f) => f !== "[DONE]" && f.object === "chat.completion.chunk");
      expect(chunks.some((ch) => ch.choices?.some((x: any) => x.finish_reason !== null))).toBe(false);
      const row = await expectSettled(g, upstream, key, id, CHAT, c.status, c.code);
      if (c.settlesUsage) expect(row.inputTokens).toBeGreaterThan(0);
    });

    for (const ep of ENDPOINTS) {
      test(`${ep.name}, stream:false: ${c.name}`, async () => {
        upstream.setScenario(c.scenario);
        const { key, id } = await newKey();
        const res = await fetch(`${g.url}${ep.path}`, authed(key, ep.body(false)));
        expect(res.status).toBe(c.status);
        const e = await envelope(res);
        expect(e.code).toBe(c.code);
        if (c.status === 400) expect(e.type).toBe("invalid_request_error");
        const row = await expectSettled(g, upstream, key, id, ep, c.status, c.code);
        if (c.settlesUsage) expect(row.inputTokens).toBeGreaterThan(0);
      });
    }
  }
});

describe("an in-band data: {\"error\"} frame with no type (as some proxies send it)", () => {
  let odd: ReturnType<typeof Bun.serve>;
  let s: Gantry;
  beforeAll(async () => {
    const { buildResponseEvents, encodeEventStream } = await import("../../src/gateway/simulator/events");
    const events = buildResponseEvents({ model: "demo-mini", createdAt: 1, text: "partial", terminal: "none", usage: { input_tokens: 3 } });
    const body = encodeEventStream(events.slice(0, 5)) + 'data: {"error":{"message":"Upstream overloaded","type":"server_error","code":"overloaded"}}\n\n';
    odd = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body) });
    s = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${odd.port}/v1` } });
  });
  afterAll(async () => {
    await s.stop();
    await odd.stop(true);
  });

  test("is a failure on every path, with the upstream's code and message", async () => {
    const key = await s.createKey();
    const events = await readSseData(await fetch(`${s.url}${RESPONSES.path}`, authed(key, RESPONSES.body(true))));
    expect(events.map((e) => e.sequence_number ?? null).filter((n) => n !== null)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(events.at(-1).response.error).toEqual({ code: "overloaded", message: "Upstream overloaded" });
    const chat = await readSseData(await fetch(`${s.url}${CHAT.path}`, authed(key, CHAT.body(true))));
    expect(chat.at(-2).error).toMatchObject({ code: "overloaded", message: "Upstream overloaded", type: "server_error" });
    expect(chat.at(-1)).toBe("[DONE]");
    for (const ep of ENDPOINTS) {
      const res = await fetch(`${s.url}${ep.path}`, authed(key, ep.body(false)));
      expect(res.status).toBe(502);
      expect(await envelope(res)).toMatchObject({ code: "overloaded", message: "Upstream overloaded" });
    }
  });
});

describe("response.incomplete is a truncated success, with usage", () => {
  const scenario: Scenario = { kind: "incomplete", reason: "max_output_tokens", text: "truncated answ" };

  test("chat, stream:true: finish_reason length, then the usage chunk, then [DONE]", async () => {
    upstream.setScenario(scenario);
    const { key, id } = await newKey();
    const frames = await readSseData(await fetch(`${g.url}${CHAT.path}`, authed(key, CHAT.body(true))));
    expect(frames.at(-1)).toBe("[DONE]");
    const usageChunk = frames.at(-2);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.completion_tokens).toBeGreaterThan(0);
    expect(usageChunk.usage.total_tokens).toBe(usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);
    expect(frames.at(-3).choices[0].finish_reason).toBe("length");
    expect(frames.some((f) => f.error)).toBe(false);
    const text = frames.flatMap((f) => f.choices ?? []).map((c: any) => c.delta?.content ?? "").join("");
    expect(text).toBe("truncated answ");
    const row = await expectSettled(g, upstream, key, id, CHAT, 200, null);
    expect(row.outputTokens).toBe(usageChunk.usage.completion_tokens);
  });

  test("chat, stream:false: finish_reason length with usage", async () => {
    upstream.setScenario(scenario);
    const { key, id } = await newKey();
    const res = await fetch(`${g.url}${CHAT.path}`, authed(key, CHAT.body(false)));
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.choices[0]).toMatchObject({ finish_reason: "length", message: { role: "assistant", content: "truncated answ" } });
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    await expectSettled(g, upstream, key, id, CHAT, 200, null);
  });

  test("responses, both modes: status incomplete with the reason and usage", async () => {
    upstream.setScenario(scenario);
    const { key, id } = await newKey();
    const events = await readSseData(await fetch(`${g.url}${RESPONSES.path}`, authed(key, RESPONSES.body(true))));
    expect(events.at(-1)).toMatchObject({ type: "response.incomplete", response: { incomplete_details: { reason: "max_output_tokens" } } });
    upstream.setScenario(scenario);
    const whole = (await (await fetch(`${g.url}${RESPONSES.path}`, authed(key, RESPONSES.body(false)))).json()) as any;
    expect(whole).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: "truncated answ" });
    expect(whole.usage.output_tokens).toBeGreaterThan(0);
    await expectSettled(g, upstream, key, id, RESPONSES, 200, null);
  });
});

describe("the caller going away", () => {
  for (const ep of ENDPOINTS) {
    for (const stream of MODES) {
      test(`${ep.name}, stream:${stream}: disconnecting aborts the upstream request and frees the lease`, async () => {
        upstream.setScenario({ kind: "slow", delayMs: 100, text: "a b c d e f g h i j", deltas: 10 });
        const { key, id } = await newKey();
        const opened = upstream.aborted;
        const controller = new AbortController();
        const pending = fetch(`${g.url}${ep.path}`, { ...authed(key, ep.body(stream)), signal: controller.signal });
        if (stream) {
          const res = await pending;
          expect(res.status).toBe(200);
          await res.body!.getReader().read();
        } else {
          pending.catch(() => {});
          // Leave while the gateway is collecting the reply: the first text delta (after four opening events) went out.
          const written = upstream.written;
          await pollUntil(() => upstream.open === 1 && upstream.written >= written + 5, Boolean, { what: "the upstream's first text delta" });
        }
        expect(upstream.open).toBe(1);
        expect(g.deps.limiter.inFlight(id)).toBe(1);
        controller.abort();
        // The server learns of the abort asynchronously: wait until it released the lease, closed the upstream request and recorded the call.
        await pollUntil(
          async () => upstream.open === 0 && g.deps.limiter.inFlight(id) === 0 && (await g.deps.ledger.recent(1, id)).length === 1,
          Boolean,
          { what: "the aborted call to be settled" },
        );
        expect(upstream.aborted).toBe(opened + 1);
        await expectSettled(g, upstream, key, id, ep, 499, "client_closed");
      });
    }
  }
});

describe("upstream retries before any byte reached the caller", () => {
  let flaky: FakeUpstream;
  let s: Gantry;
  beforeAll(async () => {
    flaky = await startFakeUpstream();
    s = await startGantry({ config: { upstreamUrl: flaky.url, upstreamRetries: 2 } });
  });
  afterAll(async () => {
    await s.stop();
    await flaky.close();
  });

  /** Fails the first `n` requests with `failure`, then answers normally. */
  function failFirst(n: number, failure: Scenario): (body: any) => Scenario {
    let seen = 0;
    return () => (++seen <= n ? failure : { kind: "text", text: "recovered" });
  }

  test("two 503s, then success: recovered on both endpoints (stream and not)", async () => {
    for (const [ep, stream] of [
      [RESPONSES, true],
      [CHAT, false],
    ] as const) {
      flaky.setScenario(failFirst(2, { kind: "status", status: 503 }));
      const { key, id } = await newKey(s);
      const n = flaky.requests.length;
      const res = await fetch(`${s.url}${ep.path}`, authed(key, ep.body(stream)));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("recovered");
      expect(flaky.requests.length - n).toBe(3);
      await expectSettled(s, flaky, key, id, ep, 200, null);
    }
  });

  test("three 503s: the retries run out and the caller gets 502", async () => {
    flaky.setScenario(failFirst(3, { kind: "status", status: 503 }));
    const { key, id } = await newKey(s);
    const n = flaky.requests.length;
    const res = await fetch(`${s.url}${RESPONSES.path}`, authed(key, RESPONSES.body(false)));
    expect(res.status).toBe(502);
    expect((await envelope(res)).code).toBe("upstream_error");
    expect(flaky.requests.length - n).toBe(3);
    await expectSettled(s, flaky, key, id, RESPONSES, 502, "upstream_error");
  });

  test("refusals (400, 401, 429) are not retried", async () => {
    for (const [status, expected] of [
      [400, 400],
      [401, 502],
      [429, 429],
    ] as const) {
      flaky.setScenario(failFirst(1, { kind: "status", status }));
      const { key } = await newKey(s);
      const n = flaky.requests.length;
      const res = await fetch(`${s.url}${CHAT.path}`, authed(key, CHAT.body(true)));
      expect(res.status).toBe(expected);
      await res.text();
      expect(flaky.requests.length - n).toBe(1);
    }
  });

  test("a failure after the stream started is not retried", async () => {
    flaky.setScenario({ kind: "reset-mid-stream", afterEvents: 4 });
    const { key } = await newKey(s);
    const n = flaky.requests.length;
    const events = await readSseData(await fetch(`${s.url}${RESPONSES.path}`, authed(key, RESPONSES.body(true))));
    expect(events.at(-1).type).toBe("response.failed");
    expect(flaky.requests.length - n).toBe(1);
  });
});
