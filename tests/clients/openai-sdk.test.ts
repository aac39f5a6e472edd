/**
 * The official `openai` SDK as the client of a running Gantry: Responses (create with and without stream, the
 * stream helper, the two-round function-calling flow) and Chat Completions (create with and without stream,
 * tools with a full round trip, parallel calls, reasoning before a call, images, include_usage, the stream
 * helper), plus how SDK errors surface. The upstream is the strict fake one, or the demo's simulated upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError, AuthenticationError, RateLimitError } from "openai";
import { createSimulatedUpstream } from "../../src/gateway/simulator/simulated-upstream";
import { startPoolOfTwo, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;
let client: OpenAI;

let simulator: ReturnType<typeof Bun.serve>;
let demo: Gantry;
let demoClient: OpenAI;

beforeAll(async () => {
  pool = await startPoolOfTwo();
  upstream = pool.upstream;
  g = await startGantry({ config: pool.config });
  client = sdk(g, await g.createKey());
  simulator = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createSimulatedUpstream({ deltaDelayMs: 0 }) });
  demo = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${simulator.port}/v1` } });
  demoClient = sdk(demo, await demo.createKey());
});
afterAll(async () => {
  await g.stop();
  await demo.stop();
  await pool.close();
  await simulator.stop(true);
});

function sdk(server: Gantry, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
}

async function withScenario<T>(s: Scenario | ((body: any) => Scenario), fn: () => Promise<T>): Promise<T> {
  upstream.setScenario(s);
  try {
    return await fn();
  } finally {
    upstream.setScenario();
  }
}

const WEATHER_TOOL = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: false,
};
const CHAT_WEATHER_TOOL = {
  type: "function" as const,
  function: { name: "get_weather", description: "Current weather for a city", parameters: WEATHER_TOOL.parameters },
};

/** On the fake upstream: a tool result gets a text answer quoting it, anything else a call of get_weather. */
function toolFlow(body: any): Scenario {
  const last = Array.isArray(body.input) ? body.input.at(-1) : null;
  if (last?.type === "function_call_output") return { kind: "text", text: `The tool said: ${last.output}` };
  return { kind: "calls", calls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }] };
}

describe("responses with the SDK", () => {
  test("responses.create without stream: output_text, id, usage", async () => {
    const r = await client.responses.create({ model: "demo-mini", input: "hello sdk" });
    expect(r.object).toBe("response");
    expect(r.status).toBe("completed");
    expect(r.id).toMatch(/^resp_/);
    expect(r.output_text).toBe("Echo: hello sdk");
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
  });

  test("responses.create with stream:true: the event types in order and the final text", async () => {
    const stream = await client.responses.create({ model: "demo-mini", input: "stream me please", stream: true });
    const types: string[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | null = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") final = ev.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.in_progress");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.content_part.added");
    expect(types).toContain("response.output_text.done");
    expect(types).toContain("response.output_item.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("Echo: stream me please");
    expect(final!.usage!.output_tokens).toBeGreaterThan(0);
  });

  test("client.responses.stream(...) helper: delta events and finalResponse()", async () => {
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: "demo-mini", input: "helper" });
    stream.on("response.output_text.delta", (ev) => deltas.push(ev.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Echo: helper");
    expect(deltas.join("")).toBe("Echo: helper");
  });

  test("an upstream terminal event with an empty output: the stream helper and create() both get the whole reply", async () => {
    await withScenario({ kind: "empty-output", text: "only in the item events" }, async () => {
      // The SDK's helper takes the terminal event's response as final, so the gateway fills its output in.
      const final = await client.responses.stream({ model: "demo-mini", input: "x" }).finalResponse();
      expect(final.status).toBe("completed");
      expect(final.output_text).toBe("only in the item events");
      const whole = await client.responses.create({ model: "demo-mini", input: "x" });
      expect(whole.output_text).toBe("only in the item events");
    });
  });

  for (const [name, getClient, fake] of [
    ["fake upstream", () => client, true],
    ["demo's simulated upstream", () => demoClient, false],
  ] as const) {
    test(`the two-round function-calling flow, tool_choice naming the function (${name})`, async () => {
      const run = async () => {
        const c = getClient();
        const user = { role: "user" as const, content: "What is the weather in Paris?" };
        const first = await c.responses.create({
          model: "demo-mini",
          input: [user],
          tools: [WEATHER_TOOL],
          tool_choice: { type: "function", name: "get_weather" },
        });
        const call = first.output.find((i) => i.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
        expect(call).toBeDefined();
        expect(call.name).toBe("get_weather");
        expect(call.call_id).toMatch(/^call_/);
        const args = JSON.parse(call.arguments);
        expect(typeof args.city).toBe("string");

        const n = upstream.requests.length;
        const second = await c.responses.create({
          model: "demo-mini",
          input: [user, call, { type: "function_call_output", call_id: call.call_id, output: '{"temperature_c":21}' }],
          tools: [WEATHER_TOOL],
        });
        expect(second.status).toBe("completed");
        expect(second.output_text).toContain('{"temperature_c":21}');
        expect(second.output.some((i) => i.type === "function_call")).toBe(false);
        if (fake) {
          const seen = upstream.requests[n].body.input;
          expect(seen[1]).toMatchObject({ type: "function_call", call_id: call.call_id, name: "get_weather" });
          expect(seen[2]).toMatchObject({ type: "function_call_output", call_id: call.call_id });
        }
      };
      if (fake) await withScenario(toolFlow, run);
      else await run();
    });
  }

  test("round two without tools: the definition is rebuilt from the history, so the upstream accepts it", async () => {
    const user = { role: "user" as const, content: "Weather in Oslo?" };
    const first = await demoClient.responses.create({ model: "demo-mini", input: [user], tools: [WEATHER_TOOL] });
    const call = first.output.find((i) => i.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await demoClient.responses.create({
      model: "demo-mini",
      input: [user, call, { type: "function_call_output", call_id: call.call_id, output: "cold" }],
    });
    expect(second.output_text).toContain("get_weather tool returned cold");
  });

  test("XML tool text naming an offered tool: the SDK's stream helper assembles the injected function_call", async () => {
    const text = 'Checking. <tool_use>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_use>';
    await withScenario({ kind: "markup", text, deltas: 30 }, async () => {
      const deltas: string[] = [];
      const stream = client.responses.stream({ model: "demo-mini", input: "x", tools: [WEATHER_TOOL] });
      stream.on("response.output_text.delta", (ev) => deltas.push(ev.delta));
      const final = await stream.finalResponse();
      expect(final.output.map((i) => i.type)).toEqual(["message", "function_call"]);
      expect(final.output_text).toBe("Checking. ");
      expect(deltas.join("")).toBe("Checking. ");
      expect(final.output[1]).toMatchObject({ name: "get_weather", arguments: '{"city":"Lyon"}' });
    });
  });

  test("a mid-stream failure: the SDK sees response.failed (never a completed) or throws on an error event", async () => {
    await withScenario({ kind: "failed", code: "server_error", message: "boom", text: "partial" }, async () => {
      const stream = await client.responses.create({ model: "demo-mini", input: "x", stream: true });
      const types: string[] = [];
      let failed: any = null;
      for await (const ev of stream) {
        types.push(ev.type);
        if (ev.type === "response.failed") failed = ev.response;
      }
      expect(types.at(-1)).toBe("response.failed");
      expect(types).not.toContain("response.completed");
      expect(failed.error).toMatchObject({ code: "server_error", message: "boom" });
      const final = await client.responses.stream({ model: "demo-mini", input: "x" }).finalResponse();
      expect(final.status).toBe("failed");
    });
    await withScenario({ kind: "reset-mid-stream", afterEvents: 5 }, async () => {
      const stream = await client.responses.create({ model: "demo-mini", input: "x", stream: true });
      const types: string[] = [];
      for await (const ev of stream) types.push(ev.type);
      expect(types.at(-1)).toBe("response.failed");
    });
    await withScenario({ kind: "error-event", nested: true, code: "server_error", message: "kaput" }, async () => {
      const stream = await client.responses.create({ model: "demo-mini", input: "x", stream: true });
      let thrown: unknown = null;
      try {
        for await (const _ of stream);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(APIError);
      expect((thrown as APIError).message).toContain("kaput");
    });
    await withScenario({ kind: "failed", code: "server_error", message: "boom" }, async () => {
      const err = await client.responses.create({ model: "demo-mini", input: "x" }).catch((e) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(err.status).toBe(502);
      expect(err.code).toBe("server_error");
    });
  });
});

describe("chat completions with the SDK", () => {
  const hello = [{ role: "user" as const, content: "hello chat" }];

  test("create without stream", async () => {
    const r = await client.chat.completions.create({ model: "demo-mini", messages: [{ role: "system", content: "Be nice." }, ...hello] });
    expect(r.object).toBe("chat.completion");
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.model).toBe("demo-mini");
    expect(r.choices[0].message).toMatchObject({ role: "assistant", content: "Echo: hello chat" });
    expect(r.choices[0].finish_reason).toBe("stop");
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    expect(upstream.requests.at(-1)!.body.instructions).toBe("Be nice.");
  });

  test("create with stream: role first, content deltas, finish_reason stop, no usage chunk unless asked", async () => {
    const stream = await client.chat.completions.create({ model: "demo-mini", messages: hello, stream: true });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Echo: hello chat");
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe("stop");
    expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  test("stream_options.include_usage: a last chunk with usage and no choices", async () => {
    const stream = await client.chat.completions.create({
      model: "demo-mini",
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe("stop");
    expect(chunks.slice(0, -1).every((c) => c.usage == null)).toBe(true);
  });

  test("client.chat.completions.stream(...) helper and finalChatCompletion()", async () => {
    const contents: string[] = [];
    const runner = client.chat.completions.stream({ model: "demo-mini", messages: hello });
    runner.on("content", (delta) => contents.push(delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.content).toBe("Echo: hello chat");
    expect(final.choices[0].finish_reason).toBe("stop");
    expect(contents.join("")).toBe("Echo: hello chat");
  });

  for (const [name, getClient, fake] of [
    ["fake upstream", () => client, true],
    ["demo's simulated upstream", () => demoClient, false],
  ] as const) {
    test(`tools: a full round trip (assistant tool_calls + tool message), streamed and not (${name})`, async () => {
      const run = async () => {
        const c = getClient();
        const user = { role: "user" as const, content: "What is the weather in Paris?" };
        const first = await c.chat.completions.create({
          model: "demo-mini",
          messages: [user],
          tools: [CHAT_WEATHER_TOOL],
          tool_choice: { type: "function", function: { name: "get_weather" } },
        });
        expect(first.choices[0].finish_reason).toBe("tool_calls");
        const msg = first.choices[0].message;
        expect(msg.content).toBeNull();
        expect(msg.tool_calls).toHaveLength(1);
        const call = msg.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
        expect(call.type).toBe("function");
        expect(call.id).toMatch(/^call_/);
        expect(call.function.name).toBe("get_weather");
        expect(typeof JSON.parse(call.function.arguments).city).toBe("string");

        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [user, msg, { role: "tool", tool_call_id: call.id, content: '{"temperature_c":21}' }];
        const n = upstream.requests.length;
        const second = await c.chat.completions.create({ model: "demo-mini", messages, tools: [CHAT_WEATHER_TOOL] });
        expect(second.choices[0].finish_reason).toBe("stop");
        expect(second.choices[0].message.content).toContain('{"temperature_c":21}');
        if (fake) {
          const seen = upstream.requests[n].body.input;
          expect(seen.map((i: any) => i.type)).toEqual(["message", "function_call", "function_call_output"]);
          expect(seen[1]).toMatchObject({ call_id: call.id, name: "get_weather", arguments: call.function.arguments });
          expect(seen[2]).toEqual({ type: "function_call_output", call_id: call.id, output: '{"temperature_c":21}' });
        }

        const streamed = await c.chat.completions.create({ model: "demo-mini", messages, tools: [CHAT_WEATHER_TOOL], stream: true });
        let text = "";
        for await (const chunk of streamed) text += chunk.choices[0]?.delta.content ?? "";
        expect(text).toBe(second.choices[0].message.content!);
      };
      if (fake) await withScenario(toolFlow, run);
      else await run();
    });
  }

  test("parallel tool calls: indexes 0 and 1, each with its own id, streamed and collected", async () => {
    const calls = [
      { name: "get_weather", arguments: '{"city":"Paris"}', callId: "call_par_a" },
      { name: "get_weather", arguments: '{"city":"Oslo"}', callId: "call_par_b" },
    ];
    await withScenario({ kind: "calls", calls }, async () => {
      const stream = await client.chat.completions.create({ model: "demo-mini", messages: hello, tools: [CHAT_WEATHER_TOOL], parallel_tool_calls: true, stream: true });
      const byIndex = new Map<number, { id?: string; name?: string; args: string }>();
      let finish: string | null = null;
      for await (const chunk of stream) {
        for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
          const acc = byIndex.get(tc.index) ?? { args: "" };
          if (tc.id) {
            expect(acc.id).toBeUndefined(); // id and name come once, in the first delta of a call
            acc.id = tc.id;
            acc.name = tc.function?.name;
          }
          acc.args += tc.function?.arguments ?? "";
          byIndex.set(tc.index, acc);
        }
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect([...byIndex.keys()]).toEqual([0, 1]);
      expect(byIndex.get(0)).toEqual({ id: "call_par_a", name: "get_weather", args: '{"city":"Paris"}' });
      expect(byIndex.get(1)).toEqual({ id: "call_par_b", name: "get_weather", args: '{"city":"Oslo"}' });
      expect(finish).toBe("tool_calls");
      expect(upstream.requests.at(-1)!.body.parallel_tool_calls).toBe(true);

      const final = await client.chat.completions.stream({ model: "demo-mini", messages: hello, tools: [CHAT_WEATHER_TOOL] }).finalChatCompletion();
      expect(final.choices[0].message.tool_calls!.map((t: any) => [t.id, t.function.arguments])).toEqual([
        ["call_par_a", '{"city":"Paris"}'],
        ["call_par_b", '{"city":"Oslo"}'],
      ]);
      const whole = await client.chat.completions.create({ model: "demo-mini", messages: hello, tools: [CHAT_WEATHER_TOOL] });
      expect(whole.choices[0].message.tool_calls).toHaveLength(2);
    });
  });

  test("a reasoning item before the call still gives the call index 0; its summary comes as reasoning_content", async () => {
    await withScenario({ kind: "reasoning-call", reasoning: "The user wants weather, so call the tool." }, async () => {
      const stream = await client.chat.completions.create({ model: "demo-mini", messages: hello, tools: [CHAT_WEATHER_TOOL], stream: true });
      const indexes = new Set<number>();
      let reasoning = "";
      for await (const chunk of stream) {
        for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) indexes.add(tc.index);
        reasoning += (chunk.choices[0]?.delta as any)?.reasoning_content ?? "";
      }
      expect([...indexes]).toEqual([0]);
      expect(reasoning).toBe("The user wants weather, so call the tool.");
    });
  });

  test("reasoning_effort asks the upstream for a summary, so reasoning_content reaches the client (demo upstream)", async () => {
    const stream = await demoClient.chat.completions.create({ model: "demo-mini", messages: hello, reasoning_effort: "low", stream: true });
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      reasoning += (chunk.choices[0]?.delta as any)?.reasoning_content ?? "";
      content += chunk.choices[0]?.delta.content ?? "";
    }
    expect(reasoning).toContain("low effort");
    expect(content).toContain("hello chat");
  });

  test("an image message: image_url with an https URL and with a data URL become input_image upstream", async () => {
    const dataUrl = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const n = upstream.requests.length;
    const r = await client.chat.completions.create({
      model: "demo-mini",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these pictures?" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
            { type: "image_url", image_url: { url: dataUrl, detail: "low" } },
          ],
        },
      ],
    });
    expect(r.choices[0].message.content).toBe("Echo: What is in these pictures?");
    expect(upstream.requests[n].body.input[0].content).toEqual([
      { type: "input_text", text: "What is in these pictures?" },
      { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" },
      { type: "input_image", image_url: dataUrl, detail: "low" },
    ]);
  });
});

describe("SDK errors", () => {
  test("a bad key: AuthenticationError with code invalid_api_key, on both endpoints", async () => {
    const bad = sdk(g, "gk-this-key-does-not-exist");
    for (const call of [
      () => bad.responses.create({ model: "demo-mini", input: "x" }),
      () => bad.chat.completions.create({ model: "demo-mini", messages: [{ role: "user", content: "x" }], stream: true }),
    ]) {
      const err = await call().catch((e) => e);
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(err.status).toBe(401);
      expect(err.code).toBe("invalid_api_key");
    }
  });

  test("a rate-limited key: RateLimitError with code rate_limit_rpm", async () => {
    const limited = sdk(g, await g.createKey({ rpm: 1 }));
    await limited.chat.completions.create({ model: "demo-mini", messages: [{ role: "user", content: "x" }] });
    const err = await limited.responses.create({ model: "demo-mini", input: "x" }).catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.code).toBe("rate_limit_rpm");
    expect(err.type).toBe("invalid_request_error");
    expect(Number(err.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  for (const scenario of [
    { kind: "reset-mid-stream", afterEvents: 6 },
    { kind: "failed", code: "server_error", message: "upstream exploded", text: "half an ans" },
    { kind: "no-terminal", text: "cut off" },
    { kind: "malformed", afterEvents: 6 },
  ] as Scenario[]) {
    test(`a chat stream that fails mid-way (${scenario.kind}) makes the SDK's iterator throw an APIError`, async () => {
      await withScenario(scenario, async () => {
        const stream = await client.chat.completions.create({ model: "demo-mini", messages: [{ role: "user", content: "x" }], stream: true });
        const finishes: unknown[] = [];
        let thrown: unknown = null;
        try {
          for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(APIError);
        expect(finishes).toEqual([]);
        const helper = await client.chat.completions
          .stream({ model: "demo-mini", messages: [{ role: "user", content: "x" }] })
          .finalChatCompletion()
          .catch((e) => e);
        expect(helper).toBeInstanceOf(Error);
      });
    });
  }
});

test("the pool's first account failed every call it was given before content, and the SDK never saw one of them", () => {
  expect(pool.failing.requests.filter((r) => r.path === "/v1/responses").length).toBeGreaterThan(0);
});
