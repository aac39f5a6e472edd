/**
 * POST /v1/messages/count_tokens over real HTTP: the count of the OpenAI Cookbook's weather request (the input
 * tokens OpenAI's API reported for it, 101 on gpt-4o) sent in Anthropic's shape through an alias; no upstream call
 * and no ledger row; authentication, permission and rate limits as for a message, in Anthropic's envelope.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url, modelAliases: { "claude-sonnet-*": "gpt-4o", "claude-legacy-*": "gpt-4" } } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** The Cookbook's tool example (examples/How_to_count_tokens_with_tiktoken.ipynb, section 7) in Anthropic's shape. */
const WEATHER = {
  system: "You are a helpful assistant that can answer to questions about the weather.",
  messages: [{ role: "user", content: "What's the weather like in San Francisco?" }],
  tools: [
    {
      name: "get_current_weather",
      description: "Get the current weather in a given location",
      input_schema: {
        type: "object",
        properties: {
          location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
          unit: { type: "string", description: "The unit of temperature to return", enum: ["celsius", "fahrenheit"] },
        },
        required: ["location"],
      },
    },
  ],
};

function count(key: string, body: unknown, path = "/v1/messages/count_tokens", auth: "x-api-key" | "bearer" = "x-api-key"): Promise<Response> {
  const credential: Record<string, string> = auth === "x-api-key" ? { "x-api-key": key } : { authorization: `Bearer ${key}` };
  return fetch(`${g.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...credential },
    body: JSON.stringify(body),
  });
}

describe("count_tokens", () => {
  test("the Cookbook's weather request counts what OpenAI's API reported: 101 on gpt-4o, 105 on gpt-4; nothing reaches the upstream, nothing is billed", async () => {
    const key = await g.createKey();
    const before = upstream.requests.length;
    const res = await count(key, { model: "claude-sonnet-4-5", ...WEATHER });
    expect(res.status).toBe(200);
    expect(res.headers.get("request-id")).toStartWith("req_");
    expect(await res.json()).toEqual({ input_tokens: 101 });
    expect(await (await count(key, { model: "claude-legacy-1", ...WEATHER })).json()).toEqual({ input_tokens: 105 });
    expect(upstream.requests.length).toBe(before);
    const rows = await g.query("SELECT request_id FROM usage_ledger WHERE endpoint = $1", "messages.count_tokens");
    expect(rows).toEqual([]);
  });

  test("every spelling Claude Code and the SDKs use: /v1 or not, ?beta=true, x-api-key or bearer", async () => {
    const key = await g.createKey();
    const body = { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hello" }] };
    const counts = [];
    for (const [path, auth] of [["/v1/messages/count_tokens", "x-api-key"], ["/v1/messages/count_tokens?beta=true", "x-api-key"], ["/messages/count_tokens", "bearer"]] as const) {
      const res = await count(key, body, path, auth);
      expect(res.status).toBe(200);
      counts.push(((await res.json()) as any).input_tokens);
    }
    // "hello" as a user message after the default instructions the upstream would get.
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeGreaterThan(8);
  });

  test("refusals in Anthropic's envelope: no key, a model the key may not use, a bad body, the key's RPM", async () => {
    const errorOf = async (res: Response) => [res.status, ((await res.json()) as any).error.type];
    expect(await errorOf(await count("", { model: "claude-sonnet-4-5", messages: [] }))).toEqual([401, "authentication_error"]);
    const sonnetOnly = await g.createKey({ modelMode: "allow", models: ["claude-sonnet-*"] });
    expect(await errorOf(await count(sonnetOnly, { model: "gpt-4o", messages: [{ role: "user", content: "x" }] }))).toEqual([403, "permission_error"]);
    expect(await errorOf(await count(sonnetOnly, { model: "claude-sonnet-4-5", messages: "not a list" }))).toEqual([400, "invalid_request_error"]);
    const limited = await g.createKey({ rpm: 2 });
    const body = { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] };
    expect((await count(limited, body)).status).toBe(200);
    expect((await count(limited, body)).status).toBe(200);
    const third = await count(limited, body);
    expect(await errorOf(third)).toEqual([429, "rate_limit_error"]);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("a hostile body (2 MB of random characters, the tokenizer's worst case) is answered within its budget while other requests are served", async () => {
    const key = await g.createKey();
    const warm = await count(key, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "warm up" }] });
    expect(warm.status).toBe(200);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed);
    const text = Array.from({ length: 2_000_000 }, () => String.fromCharCode(33 + (random() % 94))).join("");
    const started = performance.now();
    let done = false;
    const counted = count(key, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: text }] }).finally(() => (done = true));
    // Health checks while it counts: each answered without waiting for the count to end.
    const waits: number[] = [];
    while (!done) {
      const t = performance.now();
      await fetch(`${g.url}/healthz`);
      waits.push(performance.now() - t);
    }
    const res = await counted;
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    const { input_tokens } = (await res.json()) as { input_tokens: number };
    // Random printable ASCII runs about 0.7 tokens a character: extrapolated past the budget, not guessed at 1/4.
    expect(input_tokens).toBeGreaterThan(1_000_000);
    expect(input_tokens).toBeLessThan(2_000_000);
    expect(waits.length).toBeGreaterThan(3);
    expect(Math.max(...waits)).toBeLessThan(elapsed / 2);
    expect(elapsed).toBeLessThan(5000);
  });
});
