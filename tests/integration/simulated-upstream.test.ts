import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSimulatedUpstream } from "../../src/gateway/simulator/simulated-upstream";

/** Naive SSE reader for assertions. */
function parse(text: string): any[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n"))
    .filter(Boolean)
    .map((d) => JSON.parse(d));
}

const weatherTools = [
  {
    type: "function",
    name: "get_weather",
    description: "Weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
      required: ["city", "days", "unit"],
    },
  },
  {
    type: "function",
    name: "search",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  },
];

const user = (text: string) => ({ role: "user", content: [{ type: "input_text", text }] });

let fast: ReturnType<typeof Bun.serve>;
let normal: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  fast = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: createSimulatedUpstream({ deltaDelayMs: 0 }) });
  normal = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: createSimulatedUpstream() });
});
afterAll(async () => {
  await fast.stop(true);
  await normal.stop(true);
});

function post(payload: Record<string, unknown>, server = fast, auth = "Bearer demo-key") {
  return fetch(`http://127.0.0.1:${server.port}/v1/responses`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-mini", instructions: "You are a helpful assistant.", stream: true, ...payload }),
  });
}

async function events(payload: Record<string, unknown>) {
  const res = await post(payload);
  expect(res.status).toBe(200);
  return parse(await res.text());
}

describe("simulated upstream: refusals", () => {
  test("stream:false is refused like the real upstream", async () => {
    const res = await post({ stream: false, input: [user("hi")] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: "Stream must be set to true" });
  });

  test("no bearer key, unknown model, unknown path, system role", async () => {
    expect((await post({ input: [user("hi")] }, fast, "")).status).toBe(401);

    const model = await post({ model: "nope", input: [user("hi")] });
    expect(model.status).toBe(400);
    expect((await model.json()).detail).toContain("'nope'");

    const missing = await fetch(`http://127.0.0.1:${fast.port}/v1/embeddings`, { headers: { authorization: "Bearer k" } });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.message).toContain("/v1/embeddings");

    const system = await post({ input: [{ role: "system", content: "x" }, user("hi")] });
    expect(system.status).toBe(400);
    expect((await system.json()).error.param).toBe("input[0].role");
  });

  test("models list", async () => {
    const res = await fetch(`http://127.0.0.1:${fast.port}/v1/models`, { headers: { authorization: "Bearer k" } });
    const list = await res.json();
    expect(list.object).toBe("list");
    expect(list.data.map((m: any) => m.id)).toEqual(["demo-mini", "demo-large", "gpt-5.4"]);
    expect(list.data[0]).toEqual({ id: "demo-mini", object: "model", created: expect.any(Number), owned_by: "gantry-demo" });
  });
});

describe("simulated upstream: replies", () => {
  test("text reply echoes the user in ~20 deltas with usage from the lengths", async () => {
    const ev = await events({ input: [user("Tell me about Gantry")] });
    expect(ev[0].type).toBe("response.created");
    expect(ev[0].response.instructions).toBe("You are a helpful assistant.");
    const deltas = ev.filter((e) => e.type === "response.output_text.delta");
    expect(deltas).toHaveLength(20);
    const text = deltas.map((d) => d.delta).join("");
    expect(text).toStartWith('Gantry demo model here. You said: "Tell me about Gantry".');
    const done = ev[ev.length - 1];
    expect(done.type).toBe("response.completed");
    expect(done.response.output[0].content[0].text).toBe(text);
    const u = done.response.usage;
    expect(u.output_tokens).toBe(Math.ceil(text.length / 4));
    expect(u.input_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
  });

  test("a bare string input is the user's message; replies are deterministic", async () => {
    const text = (ev: any[]) => ev[ev.length - 1].response.output[0].content[0].text;
    const a = await events({ input: "same words" });
    const b = await events({ input: [user("same words")] });
    expect(text(a)).toBe(text(b));
    expect(text(a)).toContain('"same words"');
  });

  test("with tools, a user turn gets a function call with arguments from the schema", async () => {
    const ev = await events({ tools: weatherTools, input: [user("What's the weather in Paris for 3 days?")] });
    const item = ev[ev.length - 1].response.output[0];
    expect(item).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(item.call_id).toMatch(/^call_/);
    // The arguments a model would give: the city the user named, the number of days, the first allowed unit.
    expect(JSON.parse(item.arguments)).toEqual({ city: "Paris", days: 3, unit: "celsius" });
    const argDeltas = ev.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(argDeltas.map((d) => d.delta).join("")).toBe(item.arguments);
  });

  test("tool_choice naming a function picks that function; tool_choice none answers in text", async () => {
    const named = await events({ tools: weatherTools, tool_choice: { type: "function", name: "search" }, input: [user("find cat videos")] });
    const call = named[named.length - 1].response.output[0];
    expect(call.name).toBe("search");
    expect(JSON.parse(call.arguments)).toEqual({ query: "cat videos" });

    const none = await events({ tools: weatherTools, tool_choice: "none", input: [user("just talk")] });
    expect(none[none.length - 1].response.output[0].type).toBe("message");
  });

  test("after a function_call_output the reply uses the output", async () => {
    const ev = await events({
      tools: weatherTools,
      input: [
        user("Weather in Paris?"),
        { type: "function_call", call_id: "call_w1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_w1", output: '{"temp_c":21,"sky":"clear"}' },
      ],
    });
    const msg = ev[ev.length - 1].response.output[0];
    expect(msg.type).toBe("message");
    expect(msg.content[0].text).toContain("get_weather");
    expect(msg.content[0].text).toContain('{"temp_c":21,"sky":"clear"}');
  });

  test("reasoning effort adds a reasoning item first, with summary and encrypted content when asked", async () => {
    const ev = await events({
      model: "gpt-5.4",
      reasoning: { effort: "xhigh", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      input: [user("think hard")],
    });
    const out = ev[ev.length - 1].response.output;
    expect(out.map((o: any) => o.type)).toEqual(["reasoning", "message"]);
    expect(out[0].summary[0].text).toContain("xhigh");
    expect(out[0].encrypted_content).toStartWith("gAAAAB");
    const u = ev[ev.length - 1].response.usage;
    expect(u.output_tokens_details.reasoning_tokens).toBeGreaterThan(100);
    expect(u.output_tokens).toBeGreaterThan(u.output_tokens_details.reasoning_tokens);
  });

  test("encrypted reasoning of a question outside Latin-1 (Claude Code's prompts hold such characters): UTF-8 in base64, no 500", async () => {
    const ev = await events({
      model: "gpt-5.4",
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      input: [user("Wie geht’s? — 你好 ✓")],
    });
    const reasoning = ev[ev.length - 1].response.output[0];
    expect(reasoning.type).toBe("reasoning");
    expect(Buffer.from(reasoning.encrypted_content.slice("gAAAAB".length), "base64").toString("utf8")).toContain("你好");
  });

  test("an agent offering many tools gets text for a greeting, and a call of the tool its user names", async () => {
    const tools = ["Agent", "Bash", "Read", "Edit", "Write", "Glob"].map((name) => ({ type: "function", name, parameters: { type: "object", properties: { command: { type: "string" } } } }));
    const greeting = (await events({ model: "gpt-5.4", tools, input: [user("Hello")] })).at(-1).response.output;
    expect(greeting.map((o: any) => o.type)).toEqual(["message"]);
    const asked = (await events({ model: "gpt-5.4", tools, input: [user("Use bash to list the files")] })).at(-1).response.output;
    expect(asked.map((o: any) => [o.type, o.name])).toEqual([["function_call", "Bash"]]);
    const required = (await events({ model: "gpt-5.4", tools, tool_choice: "required", input: [user("Hello")] })).at(-1).response.output;
    expect(required[0].type).toBe("function_call");
  });

  test("default pacing streams visibly: deltas arrive over time, as text/event-stream", async () => {
    const started = Date.now();
    const res = await post({ input: [user("pace")] }, normal);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const reader = res.body!.getReader();
    let reads = 0;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      reads++;
    }
    expect(reads).toBeGreaterThan(10);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  test("a client that disconnects mid-stream does not break the server", async () => {
    const abort = new AbortController();
    const res = await fetch(`http://127.0.0.1:${normal.port}/v1/responses`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ model: "demo-mini", instructions: "Be brief.", stream: true, input: "bye" }),
      signal: abort.signal,
    });
    await res.body!.getReader().read();
    abort.abort();
    const after = await post({ input: [user("still there?")] }, normal);
    expect(after.status).toBe(200);
    expect(parse(await after.text()).pop().type).toBe("response.completed");
  });
});
