/**
 * The official `@anthropic-ai/sdk` as the client of a running Gantry (baseURL = Gantry, apiKey = a Gantry key):
 * messages.create with and without stream, messages.stream and its finalMessage, a tool round trip (tool_use, then
 * tool_result), images, thinking, and the SDK's typed errors. The upstream is the strict fake one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic, { AuthenticationError, BadRequestError, PermissionDeniedError, RateLimitError, InternalServerError } from "@anthropic-ai/sdk";
import { startPoolOfTwo, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;
let client: Anthropic;

beforeAll(async () => {
  pool = await startPoolOfTwo();
  upstream = pool.upstream;
  g = await startGantry({ config: pool.config });
  client = sdk(await g.createKey());
});
afterAll(async () => {
  await g.stop();
  await pool.close();
});

function sdk(apiKey: string): Anthropic {
  return new Anthropic({ baseURL: g.url, apiKey, maxRetries: 0 });
}

async function withScenario<T>(s: Scenario | ((body: any) => Scenario), fn: () => Promise<T>): Promise<T> {
  upstream.setScenario(s);
  try {
    return await fn();
  } finally {
    upstream.setScenario();
  }
}

const MODEL = "gpt-5";
const WEATHER = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("@anthropic-ai/sdk through Gantry", () => {
  test("messages.create: text", async () => {
    const message = await withScenario({ kind: "text", text: "Hello, SDK.", usage: { input_tokens: 9, output_tokens: 3 } }, () =>
      client.messages.create({ model: MODEL, max_tokens: 100, system: "Be kind.", messages: [{ role: "user", content: "Say hello" }] }),
    );
    expect(message.type).toBe("message");
    expect(message.id).toStartWith("msg_");
    expect(message.model).toBe(MODEL);
    expect(message.content).toEqual([{ type: "text", text: "Hello, SDK." }] as any);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.input_tokens).toBe(9);
    expect(message.usage.output_tokens).toBe(3);
    expect(upstream.requests.at(-1)!.headers.authorization).toBe(`Bearer ${pool.config.upstreams[1]!.apiKey}`);
  });

  test("messages.create with stream: true, iterated", async () => {
    const stream = await withScenario({ kind: "text", text: "one two three" }, () =>
      client.messages.create({ model: MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: "count" }] }),
    );
    const types: string[] = [];
    let text = "";
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    }
    expect(text).toBe("one two three");
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
  });

  test("messages.stream: text events and finalMessage", async () => {
    const seen: string[] = [];
    const final = await withScenario({ kind: "text", text: "streamed via helper", usage: { input_tokens: 5, output_tokens: 4 } }, async () => {
      const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
      stream.on("text", (t) => seen.push(t));
      return await stream.finalMessage();
    });
    expect(seen.join("")).toBe("streamed via helper");
    expect(final.content).toEqual([{ type: "text", text: "streamed via helper" }] as any);
    expect(final.usage.output_tokens).toBe(4);
    expect(final.usage.input_tokens).toBe(5);
    expect(final.stop_reason).toBe("end_turn");
  });

  test("tools: tool_use, then the tool_result sent back", async () => {
    const first = await withScenario({ kind: "calls", calls: [{ name: "get_weather", arguments: '{"city":"Oslo"}', callId: "call_oslo" }] }, () =>
      client.messages.stream({ model: MODEL, max_tokens: 200, tools: [WEATHER], tool_choice: { type: "any" }, messages: [{ role: "user", content: "Weather in Oslo?" }] }).finalMessage(),
    );
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use")!;
    expect(use).toMatchObject({ type: "tool_use", id: "call_oslo", name: "get_weather", input: { city: "Oslo" } });
    expect(upstream.requests.at(-1)!.body.tool_choice).toBe("required");

    const second = await withScenario({ kind: "text", text: "Oslo: 3°C." }, () =>
      client.messages.create({
        model: MODEL,
        max_tokens: 200,
        tools: [WEATHER],
        messages: [
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: use.type === "tool_use" ? use.id : "", content: "3°C, snow" }] },
        ],
      }),
    );
    expect(second.content).toEqual([{ type: "text", text: "Oslo: 3°C." }] as any);
    expect(upstream.requests.at(-1)!.body.input).toContainEqual({ type: "function_call_output", call_id: "call_oslo", output: "3°C, snow" });
  });

  test("images: base64 and URL reach the upstream as input_image", async () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
            { type: "text", text: "What is in these?" },
          ],
        },
      ],
    });
    expect(message.content[0].type).toBe("text");
    const parts = upstream.requests.at(-1)!.body.input[0].content;
    expect(parts.slice(0, 2)).toEqual([
      { type: "input_image", image_url: `data:image/png;base64,${png}`, detail: "auto" },
      { type: "input_image", image_url: "https://example.com/cat.jpg", detail: "auto" },
    ]);
  });

  test("thinking: a thinking block with a signature, accepted back on the next turn", async () => {
    const first = await withScenario({ kind: "reasoning-call", reasoning: "Think first", encrypted: true }, () =>
      client.messages
        .stream({ model: MODEL, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, tools: [WEATHER], messages: [{ role: "user", content: "Weather?" }] })
        .finalMessage(),
    );
    const thinking = first.content.find((b) => b.type === "thinking");
    expect(thinking).toMatchObject({ type: "thinking", thinking: "Think first" });
    expect((thinking as any).signature).toStartWith("gantry1.");
    const use = first.content.find((b) => b.type === "tool_use")!;
    const next = await client.messages.create({
      model: MODEL,
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools: [WEATHER],
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: (use as any).id, content: "sunny" }] },
      ],
    });
    expect(next.stop_reason).toBeDefined();
    expect(upstream.requests.at(-1)!.body.input).toContainEqual(expect.objectContaining({ type: "reasoning", encrypted_content: "gAAAABfake-encrypted-reasoning" }));
  });

  test("errors: the SDK's typed errors", async () => {
    const wrong = sdk("gk-wrong-key");
    const auth = await wrong.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect(auth.error).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } });
    expect(auth.requestID).toMatch(/^req_/);

    const bad = await client.messages.create({ model: MODEL, max_tokens: 10, messages: [] }).catch((e) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad.error.error.type).toBe("invalid_request_error");

    const bounded = sdk(await g.createKey({ maxTokens: 50 }));
    expect(await bounded.messages.create({ model: MODEL, max_tokens: 4000, messages: [{ role: "user", content: "x" }] }).catch((e) => e)).toBeInstanceOf(BadRequestError);

    const narrow = sdk(await g.createKey({ modelMode: "allow", models: ["other-*"] }));
    expect(await narrow.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e) => e)).toBeInstanceOf(PermissionDeniedError);

    const limited = sdk(await g.createKey({ rpm: 1 }));
    await limited.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    const rate = await limited.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(rate).toBeInstanceOf(RateLimitError);
    expect(Number(rate.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("errors: an upstream failure mid-stream is raised by the stream helper", async () => {
    const err = await withScenario({ kind: "failed", code: "server_error", message: "upstream broke", text: "partial" }, () =>
      client.messages.stream({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).finalMessage().catch((e) => e),
    );
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toContain("upstream broke");
    const overloaded = await withScenario({ kind: "status", status: 503 }, () => client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e) => e));
    expect(overloaded).toBeInstanceOf(InternalServerError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error.error.type).toBe("overloaded_error");
  });
});
