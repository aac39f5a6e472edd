import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";

/** Naive SSE reader for assertions: frames with data, comments and bare `event:` frames skipped. */
function dataLines(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n"))
    .filter(Boolean);
}
const parse = (text: string) => dataLines(text).map((d) => JSON.parse(d));

function body(text = "hello fake", extra: Record<string, unknown> = {}) {
  return {
    model: "gpt-5.4",
    instructions: "Be brief.",
    input: [{ role: "user", content: [{ type: "input_text", text }] }],
    stream: true,
    ...extra,
  };
}

function post(up: FakeUpstream, payload: unknown, init: RequestInit = {}) {
  return fetch(`${up.url}/responses`, {
    method: "POST",
    headers: { authorization: "Bearer sk-upstream-test", "content-type": "application/json" },
    body: JSON.stringify(payload),
    ...init,
  });
}

/** The upstream's count of open streams changes when it notices a client; wait for that. */
const until = (cond: () => boolean) => pollUntil(cond, Boolean, { what: "the open-stream count" });

let up: FakeUpstream;
beforeAll(async () => {
  up = await startFakeUpstream();
});
afterAll(() => up.close());
afterEach(() => up.setScenario());

describe("quirk refusals, as the real upstream", () => {
  test("stream false or missing", async () => {
    for (const payload of [body("x", { stream: false }), { ...body(), stream: undefined }]) {
      const res = await post(up, payload);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: "Stream must be set to true" });
    }
  });

  test("missing or empty instructions", async () => {
    const { instructions, ...rest } = body();
    for (const payload of [rest, { ...rest, instructions: "" }]) {
      const res = await post(up, payload);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: "Instructions are required" });
    }
  });

  test("system role", async () => {
    const res = await post(up, body("x", { input: [{ role: "system", content: "be nice" }, ...body().input] }));
    expect(res.status).toBe(400);
    const err = (await res.json()).error;
    expect(err).toMatchObject({ type: "invalid_request_error", param: "input[0].role", code: "invalid_value" });
    expect(err.message).toStartWith("Invalid value: 'system'.");
  });

  test("assistant input_text", async () => {
    const input = [...body().input, { role: "assistant", content: [{ type: "input_text", text: "hi" }] }, ...body("again").input];
    const res = await post(up, body("x", { input }));
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe("Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.");
  });

  test("function_call naming a tool that is not in tools", async () => {
    const input = [
      ...body().input,
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
    ];
    const res = await post(up, body("x", { input }));
    expect(res.status).toBe(400);
    const err = (await res.json()).error;
    expect(err.type).toBe("invalid_request_error");
    expect(err.message).toContain("get_weather");

    const ok = await post(up, body("x", { input, tools: [{ type: "function", name: "get_weather", parameters: {} }] }));
    expect(ok.status).toBe(200);
    await ok.text();
  });

  test("missing or wrong bearer key", async () => {
    const res = await fetch(`${up.url}/responses`, { method: "POST", body: JSON.stringify(body()) });
    expect(res.status).toBe(401);
    const strict = await startFakeUpstream({ apiKey: "sk-right" });
    try {
      expect((await post(strict, body())).status).toBe(401);
      const good = await post(strict, body(), { headers: { authorization: "Bearer sk-right" } });
      expect(good.status).toBe(200);
      await good.text();
    } finally {
      await strict.close();
    }
  });

  test("lenient: true accepts what the real upstream refuses", async () => {
    const raw = await startFakeUpstream({ lenient: true });
    try {
      const res = await post(raw, { model: "gpt-5.4", stream: false, input: [{ role: "system", content: "s" }, { role: "user", content: "raw hi" }] });
      expect(res.status).toBe(200);
      const events = parse(await res.text());
      expect(events[events.length - 1].response.output[0].content[0].text).toBe("Echo: raw hi");
    } finally {
      await raw.close();
    }
  });
});

describe("streams", () => {
  test("default: echo text stream with no Content-Type and no [DONE]; request recorded", async () => {
    const before = up.requests.length;
    const res = await post(up, body("what is 2+2?"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBeNull();
    const text = await res.text();
    expect(text).not.toContain("[DONE]");
    const events = parse(text);
    expect(events[0].type).toBe("response.created");
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(deltas).toBe("Echo: what is 2+2?");
    const last = events[events.length - 1];
    expect(last.type).toBe("response.completed");
    expect(last.response.usage.input_tokens).toBeGreaterThan(0);

    const rec = up.requests[before];
    expect(rec).toMatchObject({ method: "POST", path: "/v1/responses" });
    expect(rec.headers.authorization).toBe("Bearer sk-upstream-test");
    expect(rec.body.input[0].content[0].text).toBe("what is 2+2?");
  });

  test("options: Content-Type, CRLF, comments, bare events, [DONE]", async () => {
    const noisy = await startFakeUpstream({ contentType: true, crlf: true, comments: true, bareEvents: true, done: true });
    try {
      const res = await post(noisy, body());
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const text = await res.text();
      expect(text).toContain("\r\n\r\n");
      expect(text).toContain(": keep-alive");
      expect(text).toContain("event: response.heartbeat\r\n\r\n");
      const data = dataLines(text);
      expect(data[data.length - 1]).toBe("[DONE]");
      expect(JSON.parse(data[data.length - 2]).type).toBe("response.completed");
    } finally {
      await noisy.close();
    }
  });

  test("models list follows setModels", async () => {
    const get = () => fetch(`${up.url}/models`, { headers: { authorization: "Bearer k" } }).then((r) => r.json());
    expect((await get()).data.map((m: any) => m.id)).toContain("gpt-5.4");
    up.setModels(["only-one"]);
    expect(await get()).toEqual({ object: "list", data: [{ id: "only-one", object: "model", created: 1767225600, owned_by: "fake-upstream" }] });
    up.setModels(["gpt-5.4", "gpt-5.4-mini", "fake-model"]);
  });

  test("scenario as a function of the body; calls scenario", async () => {
    up.setScenario((b) => ({ kind: "calls", calls: [{ name: "lookup", arguments: JSON.stringify({ q: b.input[0].content[0].text }), callId: "call_x" }] }));
    const events = parse(await (await post(up, body("find cats"))).text());
    const done = events.find((e) => e.type === "response.function_call_arguments.done");
    expect(done.arguments).toBe('{"q":"find cats"}');
    expect(events[events.length - 1].response.output[0]).toMatchObject({ type: "function_call", call_id: "call_x", name: "lookup" });
  });

  test("reasoning-call puts the call at output index 1; markup splits tags across deltas", async () => {
    up.setScenario({ kind: "reasoning-call", encrypted: true });
    const tools = [{ type: "function", name: "search", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }];
    let events = parse(await (await post(up, body("find the docs", { tools }))).text());
    const out = events[events.length - 1].response.output;
    expect(out.map((o: any) => o.type)).toEqual(["reasoning", "function_call"]);
    expect(out[0].encrypted_content).toBeString();
    expect(out[1]).toMatchObject({ name: "search", arguments: '{"q":"docs"}' });
    expect(events.find((e) => e.type === "response.function_call_arguments.delta").output_index).toBe(1);

    const markup = 'Sure. <tool_use><name>search</name><arguments>{"q":"x"}</arguments></tool_use>';
    up.setScenario({ kind: "markup", text: markup });
    events = parse(await (await post(up, body())).text());
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    expect(deltas.join("")).toBe(markup);
    expect(deltas.some((d) => d.includes("<") && !d.includes(">"))).toBe(true);
  });

  test("status scenarios carry headers and realistic bodies", async () => {
    up.setScenario({ kind: "status", status: 429, headers: { "retry-after": "7" } });
    const r429 = await post(up, body());
    expect(r429.status).toBe(429);
    expect(r429.headers.get("retry-after")).toBe("7");
    expect((await r429.json()).error.code).toBe("rate_limit_exceeded");

    up.setScenario({ kind: "status", status: 502 });
    const r502 = await post(up, body());
    expect(r502.status).toBe(502);
    expect(r502.headers.get("content-type")).toBe("text/html");
    expect(await r502.text()).toContain("502 Bad Gateway");
  });

  test("error-event (nested) then response.failed; empty-output; no-terminal; malformed", async () => {
    up.setScenario({ kind: "error-event", nested: true, code: "context_length_exceeded", message: "too long" });
    let events = parse(await (await post(up, body())).text());
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "error", "response.failed"]);
    expect(events[2].error.code).toBe("context_length_exceeded");

    up.setScenario({ kind: "empty-output" });
    events = parse(await (await post(up, body("e"))).text());
    expect(events[events.length - 1]).toMatchObject({ type: "response.completed", response: { output: [] } });

    up.setScenario({ kind: "no-terminal" });
    events = parse(await (await post(up, body())).text());
    expect(events[events.length - 1].type).toBe("response.output_item.done");

    up.setScenario({ kind: "malformed", afterEvents: 3 });
    const data = dataLines(await (await post(up, body())).text());
    expect(() => JSON.parse(data[3])).toThrow();
    expect(JSON.parse(data[data.length - 1]).type).toBe("response.completed");
  });

  test("trickle arrives in many small chunks that still reassemble", async () => {
    up.setScenario({ kind: "trickle", delayMs: 1, chunkBytes: 13, text: "naïve café ☕" });
    const res = await post(up, body());
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    expect(chunks.length).toBeGreaterThan(20);
    const events = parse(new TextDecoder().decode(Buffer.concat(chunks)));
    expect(events[events.length - 1].response.output[0].content[0].text).toBe("naïve café ☕");
  });
});

describe("faults and stream accounting", () => {
  test("open counts in-flight streams and drops when a client aborts", async () => {
    up.setScenario({ kind: "slow", delayMs: 40, deltas: 10 });
    const abort = new AbortController();
    const a = await post(up, body("a"), { signal: abort.signal });
    const b = await post(up, body("b"));
    await until(() => up.open === 2);
    expect(up.maxOpen).toBeGreaterThanOrEqual(2);
    const abortedBefore = up.aborted;

    const reader = a.body!.getReader();
    await reader.read();
    abort.abort();
    await until(() => up.open === 1);
    expect(up.aborted).toBe(abortedBefore + 1);

    const events = parse(await b.text());
    expect(events[events.length - 1].type).toBe("response.completed");
    await until(() => up.open === 0);
  });

  test("hang-before-headers: the client's timeout fires and the slot is released", async () => {
    up.setScenario({ kind: "hang-before-headers" });
    const started = Date.now();
    const err = await post(up, body(), { signal: AbortSignal.timeout(150) }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeLessThan(2000);
    await until(() => up.open === 0);
  });

  test("hang-mid-stream: events arrive, then silence until the client gives up", async () => {
    up.setScenario({ kind: "hang-mid-stream", afterEvents: 4 });
    const abort = new AbortController();
    const res = await post(up, body(), { signal: abort.signal });
    const reader = res.body!.getReader();
    let text = "";
    while (dataLines(text).length < 4) text += new TextDecoder().decode((await reader.read()).value);
    const next = reader.read();
    // A fixed time is the point here: nothing may arrive within it.
    const winner = await Promise.race([next.then(() => "data"), Bun.sleep(150).then(() => "silence")]);
    expect(winner).toBe("silence");
    abort.abort();
    await next.catch(() => {});
    await until(() => up.open === 0);
  });

  test("reset-mid-stream: the client gets the first events, then the read throws (not a clean EOF)", async () => {
    up.setScenario({ kind: "reset-mid-stream", afterEvents: 3 });
    const res = await post(up, body());
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = "";
    let failure: unknown;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(Error);
    expect((failure as { code?: string }).code).toBe("ECONNRESET");
    expect(parse(text).map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    await until(() => up.open === 0);
  });

  test("close() releases hung requests", async () => {
    const solo = await startFakeUpstream({ scenario: { kind: "hang-before-headers" } });
    const pending = post(solo, body()).catch((e) => e);
    await until(() => solo.open === 1);
    await solo.close();
    expect(solo.open).toBe(0);
    await pending;
  });
});
