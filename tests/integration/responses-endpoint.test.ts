/**
 * POST /v1/responses end to end, against the strict fake upstream: the normalisation as the upstream sees it,
 * streaming as it arrives, the collected reply for stream:false callers, tool-markup cleaning, keep-alive on
 * silent streams, the upstream's framing quirks, and usage settling the key's quota on every path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, readSseData, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url, keepAliveSeconds: 1 } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const MARKUP = '<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>';
const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Sends one request and returns the reply plus the body the upstream received for it. */
async function send(body: unknown, opts: { key?: string; path?: string; headers?: Record<string, string> } = {}) {
  const key = opts.key ?? await g.createKey();
  const n = upstream.requests.length;
  const res = await fetch(`${g.url}${opts.path ?? "/v1/responses"}`, authed(key, body, opts.headers));
  return { res, upstreamBody: () => upstream.requests[n]?.body, upstreamCount: () => upstream.requests.length - n };
}

interface Frame {
  event?: string;
  data: string;
}

/** SSE frames as the caller sees them, comments included (as `:`-prefixed pseudo-frames). */
function framesOf(text: string): Frame[] {
  const frames: Frame[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === "") continue;
    const lines = block.split(/\r?\n/);
    if (lines.every((l) => l.startsWith(":"))) {
      frames.push({ event: ":", data: lines.join("\n") });
      continue;
    }
    const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim();
    const data = lines
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    frames.push({ event, data });
  }
  return frames;
}

/** The output_text the openai SDK computes (openai-node `addOutputText`). */
function sdkOutputText(output: any[]): string {
  const texts: string[] = [];
  for (const item of output) {
    if (item.type !== "message") continue;
    for (const part of item.content) if (part.type === "output_text") texts.push(part.text);
  }
  return texts.join("");
}

function streamText(events: any[]): string {
  return events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");
}

describe("normalisation, as the upstream sees it", () => {
  test("system -> developer; content typed to the role; string content -> parts; stream forced; instructions and include defaults", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      stream: false,
      include: ["message.output_text.logprobs"],
      input: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "input_text", text: "first question" }] },
        { role: "assistant", content: [{ type: "input_text", text: "first answer" }] },
        { type: "message", role: "assistant", content: "second answer" },
        { role: "user", content: "second question" },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.object).toBe("response");
    expect(body.output_text).toBe("Echo: second question");
    const up = upstreamBody();
    expect(up.stream).toBe(true);
    expect(up.instructions).toBe("You are a helpful assistant.");
    expect(up.include).toEqual(["message.output_text.logprobs", "reasoning.encrypted_content"]);
    expect(up.input.map((m: any) => m.role)).toEqual(["developer", "user", "assistant", "assistant", "user"]);
    expect(up.input[0].content).toEqual([{ type: "input_text", text: "Be brief." }]);
    expect(up.input[2].content).toEqual([{ type: "output_text", text: "first answer" }]);
    expect(up.input[3].content).toEqual([{ type: "output_text", text: "second answer" }]);
    expect(up.input[4].content).toEqual([{ type: "input_text", text: "second question" }]);
  });

  test("given instructions are kept; include is not duplicated", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      instructions: "Answer in French.",
      include: ["reasoning.encrypted_content"],
      input: "bonjour",
    });
    expect(res.status).toBe(200);
    expect(upstreamBody().instructions).toBe("Answer in French.");
    expect(upstreamBody().include).toEqual(["reasoning.encrypted_content"]);
  });

  test("a plain string input is accepted and becomes one user message", async () => {
    const { res, upstreamBody } = await send({ model: "demo-mini", input: "just a string" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).output_text).toBe("Echo: just a string");
    expect(upstreamBody().input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "just a string" }] }]);
  });

  test("missing tool definitions are rebuilt from function_call items, with a schema accepting the arguments", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      input: [
        { role: "user", content: "weather in Paris?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris","days":3}' },
        { type: "function_call_output", call_id: "call_1", output: '{"temp":21}' },
      ],
    });
    expect(res.status).toBe(200);
    const tools = upstreamBody().tools;
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ type: "function", name: "get_weather" });
    expect(tools[0].parameters.type).toBe("object");
    expect(tools[0].parameters.properties.city.type).toBe("string");
    expect(tools[0].parameters.properties.days.type).toBe("number");
    expect(tools[0].parameters.required ?? []).not.toContain("nonexistent");
  });

  test("a defined tool is not rebuilt; tool_choice object and parallel_tool_calls are passed on", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      tools: [WEATHER_TOOL],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      input: [
        { role: "user", content: "weather in Paris?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
      ],
    });
    expect(res.status).toBe(200);
    const up = upstreamBody();
    expect(up.tools).toEqual([WEATHER_TOOL]);
    expect(up.tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(up.parallel_tool_calls).toBe(false);
  });

  test("reasoning.effort is forced to xhigh for gpt-5.4 only", async () => {
    const forced = await send({ model: "gpt-5.4", reasoning: { effort: "low", summary: "auto" }, input: "x" });
    expect(forced.res.status).toBe(200);
    expect(forced.upstreamBody().reasoning).toEqual({ effort: "xhigh", summary: "auto" });
    const absent = await send({ model: "gpt-5.4", input: "x" });
    expect(absent.upstreamBody().reasoning).toEqual({ effort: "xhigh" });
    const other = await send({ model: "gpt-5.4-mini", reasoning: { effort: "low" }, input: "x" });
    expect(other.upstreamBody().reasoning).toEqual({ effort: "low" });
    const none = await send({ model: "demo-mini", input: "x" });
    expect(none.upstreamBody().reasoning).toBeUndefined();
  });

  test("the per-model override list is a setting", async () => {
    const s = await startGantry({ config: { upstreamUrl: upstream.url, modelOverrides: { "demo-mini": { reasoningEffort: "medium" } } } });
    try {
      const n = upstream.requests.length;
      const res = await fetch(`${s.url}/v1/responses`, authed(await s.createKey(), { model: "demo-mini", input: "x" }));
      expect(res.status).toBe(200);
      expect(upstream.requests[n].body.reasoning).toEqual({ effort: "medium" });
      const n2 = upstream.requests.length;
      await (await fetch(`${s.url}/v1/responses`, authed(await s.createKey(), { model: "gpt-5.4", input: "x" }))).text();
      expect(upstream.requests[n2].body.reasoning).toBeUndefined();
    } finally {
      await s.stop();
    }
  });

  test("unknown fields are passed on, not stripped", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      input: "x",
      custom_field: { a: [1, 2] },
      metadata: { team: "blue" },
      text: { verbosity: "low" },
      prompt_cache_key: "abc",
    });
    expect(res.status).toBe(200);
    const up = upstreamBody();
    expect(up.custom_field).toEqual({ a: [1, 2] });
    expect(up.metadata).toEqual({ team: "blue" });
    expect(up.text).toEqual({ verbosity: "low" });
    expect(up.prompt_cache_key).toBe("abc");
  });

  test("store:true from a client becomes store:false (the upstream refuses to store)", async () => {
    const { res, upstreamBody } = await send({ model: "demo-mini", store: true, input: "x" });
    expect(res.status).toBe(200);
    expect(upstreamBody().store).toBe(false);
  });

  test("a message with content:null is dropped instead of being refused upstream", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      input: [
        { role: "user", content: "hello there" },
        { role: "assistant", content: null },
        { role: "user", content: "again" },
      ],
    });
    expect(res.status).toBe(200);
    expect(upstreamBody().input.map((m: any) => m.role)).toEqual(["user", "user"]);
  });

  test("function_call_output: content-part arrays are kept (text parts typed input_text), other values stringified", async () => {
    const { res, upstreamBody } = await send({
      model: "demo-mini",
      tools: [WEATHER_TOOL],
      input: [
        { role: "user", content: "weather?" },
        { type: "function_call", call_id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "sunny" }, { type: "text", text: "21C" }] },
        { type: "function_call", call_id: "c2", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "c2", output: { temp: 3 } },
      ],
    });
    expect(res.status).toBe(200);
    const items = upstreamBody().input;
    expect(items[2].output).toEqual([
      { type: "input_text", text: "sunny" },
      { type: "input_text", text: "21C" },
    ]);
    expect(items[4].output).toBe('{"temp":3}');
  });

  test("stream is true upstream whatever the caller sent", async () => {
    for (const stream of [true, false, undefined]) {
      const { res, upstreamBody } = await send({ model: "demo-mini", input: "x", ...(stream === undefined ? {} : { stream }) });
      expect(res.status).toBe(200);
      await res.text();
      expect(upstreamBody().stream).toBe(true);
    }
  });
});

describe("streaming caller", () => {
  test("events arrive as the upstream sends them, numbered, ending with the terminal event and no [DONE]", async () => {
    upstream.setScenario({ kind: "slow", delayMs: 80, text: "one two three four five", deltas: 5 });
    try {
      const key = await g.createKey();
      const t0 = performance.now();
      const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x", stream: true }));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let firstDeltaAt = -1;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (firstDeltaAt < 0 && text.includes("response.output_text.delta")) firstDeltaAt = performance.now() - t0;
      }
      const total = performance.now() - t0;
      // 5 deltas 80 ms apart: the first must reach the caller long before the stream ends.
      expect(firstDeltaAt).toBeGreaterThan(0);
      expect(total - firstDeltaAt).toBeGreaterThan(200);

      const frames = framesOf(text).filter((f) => f.event !== ":");
      expect(text).not.toContain("[DONE]");
      const events = frames.map((f) => JSON.parse(f.data));
      frames.forEach((f, i) => expect(f.event).toBe(events[i].type));
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events[0].type).toBe("response.created");
      expect(events.at(-1).type).toBe("response.completed");
      expect(events.filter((e) => e.type === "response.output_text.delta")).toHaveLength(5);
      expect(streamText(events)).toBe("one two three four five");
    } finally {
      upstream.setScenario();
    }
  });

  const silentCases = [
    { name: "responses", path: "/v1/responses", body: { model: "demo-mini", input: "x", stream: true }, seen: "event: response.output_item.added" },
    { name: "chat", path: "/v1/chat/completions", body: { model: "demo-mini", messages: [{ role: "user", content: "x" }], stream: true }, seen: '"role":"assistant"' },
  ];
  test.each(silentCases)("$name: a silent stream gets keep-alive comments and stays open; the caller's disconnect aborts the upstream", async (c) => {
    upstream.setScenario({ kind: "hang-mid-stream", afterEvents: 4 });
    try {
      const name = `ka-${Math.random()}`;
      const key = await g.createKey({ name });
      const id = (await g.deps.keys.get(name))!.id;
      const controller = new AbortController();
      const res = await fetch(`${g.url}${c.path}`, { ...authed(key, c.body), signal: controller.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const t0 = performance.now();
      while (!/: keep-alive[\s\S]*: keep-alive/.test(text) && performance.now() - t0 < 4000) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      // Two keep-alive comments (1 s apart) while the upstream says nothing; the events before them intact.
      expect(text.match(/^: keep-alive$/gm)?.length).toBeGreaterThanOrEqual(2);
      expect(text).toContain(c.seen);
      expect(upstream.open).toBe(1);
      controller.abort();
      await reader.cancel().catch(() => {});
      // The server learns of the abort asynchronously: wait until it let go of the upstream request and the lease.
      await pollUntil(() => upstream.open === 0 && g.deps.limiter.inFlight(id) === 0, Boolean, { what: "the upstream request and lease to be released" });
    } finally {
      upstream.setScenario();
    }
  });
});

describe("non-streaming caller", () => {
  test("gets the whole response object even when the terminal output is empty; output_text as the SDK computes it", async () => {
    upstream.setScenario({ kind: "empty-output", text: "Built from the item events." });
    try {
      for (const extra of [{ stream: false }, {}]) {
        const { res } = await send({ model: "demo-mini", input: "x", ...extra });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toContain("application/json");
        const body = (await res.json()) as any;
        expect(body.status).toBe("completed");
        expect(body.id).toMatch(/^resp_/);
        expect(body.output).toHaveLength(1);
        expect(body.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
        expect(body.output_text).toBe("Built from the item events.");
        expect(body.output_text).toBe(sdkOutputText(body.output));
        expect(body.usage.output_tokens).toBeGreaterThan(0);
      }
    } finally {
      upstream.setScenario();
    }
  });

  test("function calls and reasoning items are in the collected output in order", async () => {
    upstream.setScenario({ kind: "reasoning-call", reasoning: "Thinking it over." });
    try {
      const { res } = await send({ model: "demo-mini", tools: [WEATHER_TOOL], input: "weather in Paris" });
      const body = (await res.json()) as any;
      expect(body.output.map((i: any) => i.type)).toEqual(["reasoning", "function_call"]);
      expect(body.output[1]).toMatchObject({ name: "get_weather", call_id: expect.stringMatching(/^call_/) });
      expect(JSON.parse(body.output[1].arguments)).toHaveProperty("city");
      expect(body.output_text).toBe("");
    } finally {
      upstream.setScenario();
    }
  });
});

describe("XML-style tool text", () => {
  const text = `Let me check. ${MARKUP} The \`<tool_use>\` tag is what I would use.`;
  const cleaned = "Let me check.  The `<tool_use>` tag is what I would use.";

  test("cleaned from a stream (tags split across deltas) when no tool was offered", async () => {
    upstream.setScenario({ kind: "markup", text, deltas: 40 });
    try {
      const { res } = await send({ model: "demo-mini", input: "x", stream: true });
      const events = await readSseData(res);
      expect(streamText(events)).toBe(cleaned);
      const done = events.find((e) => e.type === "response.output_text.done");
      expect(done.text).toBe(cleaned);
      expect(events.some((e) => e.item?.type === "function_call")).toBe(false);
      const terminal = events.at(-1);
      expect(terminal.type).toBe("response.completed");
      expect(sdkOutputText(terminal.response.output)).toBe(cleaned);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    } finally {
      upstream.setScenario();
    }
  });

  test("cleaned in a non-streamed reply", async () => {
    upstream.setScenario({ kind: "markup", text, deltas: 40 });
    try {
      const { res } = await send({ model: "demo-mini", input: "x" });
      const body = (await res.json()) as any;
      expect(body.output_text).toBe(cleaned);
      expect(body.output.map((i: any) => i.type)).toEqual(["message"]);
    } finally {
      upstream.setScenario();
    }
  });

  test("markup naming an offered tool becomes a function_call item, streamed and not", async () => {
    upstream.setScenario({ kind: "markup", text, deltas: 40 });
    try {
      const streamed = await send({ model: "demo-mini", input: "x", stream: true, tools: [WEATHER_TOOL] });
      const events = await readSseData(streamed.res);
      expect(streamText(events)).toBe(cleaned);
      const added = events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
      expect(added).toBeDefined();
      const callDone = events.find((e) => e.type === "response.output_item.done" && e.item.type === "function_call");
      expect(callDone.item).toMatchObject({ name: "get_weather", arguments: '{"city":"Paris"}', call_id: expect.stringMatching(/^call_/) });
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.at(-1).response.output.map((i: any) => i.type)).toEqual(["message", "function_call"]);

      const whole = await send({ model: "demo-mini", input: "x", tools: [WEATHER_TOOL] });
      const body = (await whole.res.json()) as any;
      expect(body.output_text).toBe(cleaned);
      expect(body.output.map((i: any) => i.type)).toEqual(["message", "function_call"]);
      expect(body.output[1]).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"Paris"}' });
    } finally {
      upstream.setScenario();
    }
  });

  test("on the chat endpoint too: cleaned text, and a tool_calls entry when the tool was offered", async () => {
    upstream.setScenario({ kind: "markup", text, deltas: 40 });
    try {
      const chatTool = { type: "function", function: { name: "get_weather", parameters: WEATHER_TOOL.parameters } };
      const messages = [{ role: "user", content: "x" }];
      const plain = (await (await send({ model: "demo-mini", messages }, { path: "/v1/chat/completions" })).res.json()) as any;
      expect(plain.choices[0]).toMatchObject({ message: { content: cleaned }, finish_reason: "stop" });
      expect(plain.choices[0].message.tool_calls).toBeUndefined();

      const withTool = (await (await send({ model: "demo-mini", messages, tools: [chatTool] }, { path: "/v1/chat/completions" })).res.json()) as any;
      expect(withTool.choices[0].message.content).toBe(cleaned);
      expect(withTool.choices[0].finish_reason).toBe("tool_calls");
      expect(withTool.choices[0].message.tool_calls).toEqual([
        { id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ]);

      const streamed = await send({ model: "demo-mini", messages, tools: [chatTool], stream: true }, { path: "/v1/chat/completions" });
      const chunks = (await readSseData(streamed.res)).filter((c) => c !== "[DONE]");
      const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
      expect(content).toBe(cleaned);
      const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
      expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "get_weather" } });
      expect(calls.every((c: any) => c.index === 0)).toBe(true);
      expect(calls.map((c: any) => c.function?.arguments ?? "").join("")).toBe('{"city":"Paris"}');
      expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
    } finally {
      upstream.setScenario();
    }
  });

  test("raw mode leaves the markup alone", async () => {
    const lenient = await startFakeUpstream({ lenient: true, scenario: { kind: "markup", text, deltas: 40 } });
    const s = await startGantry({ config: { upstreamUrl: lenient.url } });
    try {
      const res = await fetch(`${s.url}/v1/responses`, authed(await s.createKey(), { model: "demo-mini", input: "x", stream: true }, { "x-upstream-mode": "raw" }));
      expect(streamText(await readSseData(res))).toBe(text);
    } finally {
      await s.stop();
      await lenient.close();
    }
  });
});

describe("the upstream's framing quirks", () => {
  test("no Content-Type, CRLF, comments, event lines without data and a trailing [DONE] are all understood", async () => {
    const quirky = await startFakeUpstream({ crlf: true, comments: true, bareEvents: true, done: true });
    const s = await startGantry({ config: { upstreamUrl: quirky.url } });
    try {
      const key = await s.createKey();
      const streamed = await fetch(`${s.url}/v1/responses`, authed(key, { model: "demo-mini", input: "quirks", stream: true }));
      expect(streamed.headers.get("content-type")).toStartWith("text/event-stream");
      const raw = await streamed.text();
      expect(raw).not.toContain("[DONE]");
      expect(raw).not.toContain("response.heartbeat");
      const events = framesOf(raw)
        .filter((f) => f.event !== ":")
        .map((f) => JSON.parse(f.data));
      expect(streamText(events)).toBe("Echo: quirks");
      expect(events.at(-1).type).toBe("response.completed");

      const whole = await fetch(`${s.url}/v1/responses`, authed(key, { model: "demo-mini", input: "quirks" }));
      expect(((await whole.json()) as any).output_text).toBe("Echo: quirks");

      const chat = await fetch(`${s.url}/v1/chat/completions`, authed(key, { model: "demo-mini", messages: [{ role: "user", content: "quirks" }] }));
      expect(((await chat.json()) as any).choices[0]).toMatchObject({ message: { content: "Echo: quirks" }, finish_reason: "stop" });
    } finally {
      await s.stop();
      await quirky.close();
    }
  });

  test("an event whose JSON is spread over several data lines reaches the caller as valid frames", async () => {
    // A hand-written upstream: pretty-printed JSON, one `data:` line per JSON line (legal SSE).
    const { buildResponseEvents } = await import("../../src/gateway/simulator/events");
    const events = buildResponseEvents({ model: "demo-mini", createdAt: 1, text: "multi line data", deltas: 3, usage: { input_tokens: 3 } });
    const body = events
      .map((ev) => `event: ${ev.type}\n${JSON.stringify(ev, null, 2).split("\n").map((l) => `data: ${l}`).join("\n")}\n\n`)
      .join("");
    const multi = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body) });
    const s = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${multi.port}/v1` } });
    try {
      const key = await s.createKey();
      const streamed = await fetch(`${s.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x", stream: true }));
      const got = await readSseData(streamed);
      expect(got.map((e) => e.type)).toEqual(events.map((e) => e.type));
      expect(streamText(got)).toBe("multi line data");
      const chat = await fetch(`${s.url}/v1/chat/completions`, authed(key, { model: "demo-mini", stream: true, messages: [{ role: "user", content: "x" }] }));
      const chunks = (await readSseData(chat)).filter((c) => c !== "[DONE]");
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("multi line data");
    } finally {
      await s.stop();
      await multi.stop(true);
    }
  });

  test("an upstream that keeps the connection open after its terminal event: every reply ends at that event", async () => {
    const { buildResponseEvents, encodeEventStream } = await import("../../src/gateway/simulator/events");
    const events = buildResponseEvents({ model: "demo-mini", createdAt: 1, text: "done, then silence", usage: { input_tokens: 3 } });
    // The terminal event, then a stray frame that must not reach anyone, then the connection stays open.
    const bytes = new TextEncoder().encode(encodeEventStream(events) + "event: response.output_text.delta\ndata: {not json\n\n");
    let upstreamCancelled = 0;
    const lingering = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      fetch: () => new Response(new ReadableStream({ start: (c) => c.enqueue(bytes), cancel: () => void upstreamCancelled++ })),
    });
    const s = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${lingering.port}/v1` } });
    // A deadline, not a wait: a reply that does not end at the terminal event would hang until the test's timeout.
    const within = <T>(p: Promise<T>) => Promise.race([p, Bun.sleep(5000).then(() => "still waiting" as const)]);
    try {
      const key = await s.createKey();
      const chat = { model: "demo-mini", messages: [{ role: "user", content: "x" }] };
      const whole = await within(fetch(`${s.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x" })).then((r) => r.json()));
      expect(whole).toMatchObject({ status: "completed", output_text: "done, then silence" });
      const streamed = await within(fetch(`${s.url}/v1/responses`, authed(key, { model: "demo-mini", input: "x", stream: true })).then(readSseData));
      expect(streamed).not.toBe("still waiting");
      expect((streamed as any[]).at(-1).type).toBe("response.completed");
      expect((streamed as any[]).length).toBe(events.length);
      const chatWhole = await within(fetch(`${s.url}/v1/chat/completions`, authed(key, chat)).then((r) => r.json()));
      expect(chatWhole).toMatchObject({ choices: [{ message: { content: "done, then silence" }, finish_reason: "stop" }] });
      const chatStreamed = await within(fetch(`${s.url}/v1/chat/completions`, authed(key, { ...chat, stream: true })).then(readSseData));
      expect((chatStreamed as any[]).at(-1)).toBe("[DONE]");
      expect((chatStreamed as any[]).some((c) => c.error)).toBe(false);
      // Each upstream body is cancelled as its reply ends; the cancel reaches this server a moment later.
      await pollUntil(() => upstreamCancelled, (n) => n >= 4, { what: "the four upstream bodies to be cancelled" });
      expect(upstreamCancelled).toBe(4);
    } finally {
      await s.stop();
      await lingering.stop(true);
    }
  });

  test("a stream trickling in 3-byte pieces (frames and UTF-8 split anywhere) arrives whole", async () => {
    upstream.setScenario({ kind: "trickle", delayMs: 0, chunkBytes: 3, text: "héllo wörld 🌍 done" });
    try {
      const streamed = await send({ model: "demo-mini", input: "x", stream: true });
      expect(streamText(await readSseData(streamed.res))).toBe("héllo wörld 🌍 done");
      const whole = await send({ model: "demo-mini", input: "x" });
      expect(((await whole.res.json()) as any).output_text).toBe("héllo wörld 🌍 done");
    } finally {
      upstream.setScenario();
    }
  });
});

describe("usage from the terminal event settles the key's quota", () => {
  const usage = { input_tokens: 30, output_tokens: 12, total_tokens: 42, output_tokens_details: { reasoning_tokens: 5 } };
  const cases = [
    { name: "responses, streaming", path: "/v1/responses", endpoint: "responses", body: { model: "demo-mini", input: "x", stream: true } },
    { name: "responses, not streaming", path: "/v1/responses", endpoint: "responses", body: { model: "demo-mini", input: "x" } },
    { name: "chat, streaming", path: "/v1/chat/completions", endpoint: "chat.completions", body: { model: "demo-mini", stream: true, messages: [{ role: "user", content: "x" }] } },
    { name: "chat, not streaming", path: "/v1/chat/completions", endpoint: "chat.completions", body: { model: "demo-mini", messages: [{ role: "user", content: "x" }] } },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      upstream.setScenario({ kind: "text", text: "counted", usage });
      try {
        const name = `usage-${Math.random()}`;
        const key = await g.createKey({ name, quotaTokens: 100 });
        const id = (await g.deps.keys.get(name))!.id;
        for (let i = 1; i <= 2; i++) {
          const res = await fetch(`${g.url}${c.path}`, authed(key, c.body));
          expect(res.status).toBe(200);
          await res.text();
          // No wait and no flush: the usage is settled before the reply's last byte left (gateway/call.ts).
          expect((await g.deps.keys.usage(id)).tokens).toBe(42 * i);
        }
        const row = (await g.deps.ledger.recent(1, id))[0];
        expect(row).toMatchObject({ endpoint: c.endpoint, status: 200, errorCode: null, inputTokens: 30, outputTokens: 12, reasoningTokens: 5 });
        // 84 of 100 used, 16 left: admitted once more, and that one uses the quota up.
        expect((await (await fetch(`${g.url}${c.path}`, authed(key, c.body))).text()).length).toBeGreaterThan(0);
        const refused = await fetch(`${g.url}${c.path}`, authed(key, c.body));
        expect(refused.status).toBe(429);
        expect(((await refused.json()) as any).error.code).toBe("quota_exceeded");
      } finally {
        upstream.setScenario();
      }
    });
  }
});
