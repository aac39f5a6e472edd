/**
 * GANTRY_MODEL_ALIASES over real HTTP: the key's model list judges the name the caller sent, the upstream gets the
 * alias's target, and the call is priced and recorded as the upstream's model (the log line keeps both names).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;
let sonnetOnly: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({
    config: {
      upstreamUrl: upstream.url,
      modelAliases: { "claude-opus-*": "gpt-5.4", "claude-sonnet-*": "gpt-5.2", "claude-sonnet-4-5-fast": "gpt-5-mini" },
      prices: { "gpt-5.2": { input: 1_000_000, output: 1_000_000 } },
    },
    captureLogs: true,
  });
  sonnetOnly = await g.createKey({ modelMode: "allow", models: ["claude-sonnet-*"] });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** The model names of the upstream requests made while `run` ran. */
async function upstreamModels(run: () => Promise<void>): Promise<string[]> {
  const before = upstream.requests.length;
  await run();
  return upstream.requests.slice(before).map((r) => r.body?.model ?? r.body);
}

async function ledgerRow(requestId: string): Promise<Record<string, any>> {
  const sql = "SELECT model, status, CAST(cost_micros AS DOUBLE PRECISION) AS cost_micros FROM usage_ledger WHERE request_id = $1";
  const { value } = await pollUntil(async () => (await g.query(sql, requestId))[0], Boolean, { what: `the ledger row of ${requestId}` });
  return value;
}

describe("model aliases", () => {
  test("a key allowing claude-sonnet-* calls claude-sonnet-4-5: the upstream gets gpt-5.2, the ledger records and prices gpt-5.2", async () => {
    let res!: Response;
    const models = await upstreamModels(async () => {
      res = await fetch(`${g.url}/v1/responses`, authed(sonnetOnly, { model: "claude-sonnet-4-5", input: "hello" }));
      expect(res.status).toBe(200);
    });
    expect(models).toEqual(["gpt-5.2"]);
    const body = (await res.json()) as any;
    // A Responses reply is the upstream's own: it names the model that answered.
    expect(body.model).toBe("gpt-5.2");
    const requestId = res.headers.get("x-request-id")!;
    const row = await ledgerRow(requestId);
    expect(row.model).toBe("gpt-5.2");
    expect(row.cost_micros).toBeGreaterThan(0);
    const line = g.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === requestId && l.msg === "request");
    expect([line?.model, line?.requestedModel]).toEqual(["gpt-5.2", "claude-sonnet-4-5"]);
  });

  test("the allow list judges the caller's name: claude-opus-4 (an alias of gpt-5.4) and gpt-5.2 itself are refused, nothing reaches the upstream", async () => {
    const models = await upstreamModels(async () => {
      for (const model of ["claude-opus-4", "gpt-5.2"]) {
        const res = await fetch(`${g.url}/v1/responses`, authed(sonnetOnly, { model, input: "hello" }));
        const body = (await res.json()) as any;
        expect([res.status, body.error.code, body.error.message]).toEqual([403, "model_not_allowed", `This API key may not use the model '${model}'.`]);
      }
    });
    expect(models).toEqual([]);
  });

  test("an exact name wins over a pattern; a name no entry matches goes as sent", async () => {
    const key = await g.createKey();
    const models = await upstreamModels(async () => {
      for (const model of ["claude-sonnet-4-5-fast", "claude-opus-4-6", "demo-mini"]) {
        const res = await fetch(`${g.url}/v1/responses`, authed(key, { model, input: "hello" }));
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    });
    expect(models).toEqual(["gpt-5-mini", "gpt-5.4", "demo-mini"]);
  });

  test("every dialect: chat completions (streamed and not) and raw passthrough send the target too", async () => {
    let chat!: any;
    const models = await upstreamModels(async () => {
      const res = await fetch(`${g.url}/v1/chat/completions`, authed(sonnetOnly, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }));
      expect(res.status).toBe(200);
      chat = await res.json();
      const streamed = await fetch(`${g.url}/v1/chat/completions`, authed(sonnetOnly, { model: "claude-sonnet-4-5", stream: true, messages: [{ role: "user", content: "hi" }] }));
      expect(await streamed.text()).toContain('"model":"gpt-5.2"');
      const raw = await fetch(`${g.url}/v1/responses`, authed(sonnetOnly, { model: "claude-sonnet-4-5", instructions: "Be brief.", input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }], stream: true, store: false }, { "x-upstream-mode": "raw" }));
      expect(raw.status).toBe(200);
      await raw.arrayBuffer();
    });
    expect(models).toEqual(["gpt-5.2", "gpt-5.2", "gpt-5.2"]);
    // An OpenAI-style reply names the model that answered, as the Responses reply does.
    expect(chat.model).toBe("gpt-5.2");
  });

  test("Anthropic Messages: the upstream gets the target, the message names the model the caller sent (collected and streamed)", async () => {
    const headers = { "content-type": "application/json", "x-api-key": sonnetOnly, "anthropic-version": "2023-06-01" };
    const body = { model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };
    let message!: any;
    let streamed = "";
    const models = await upstreamModels(async () => {
      const res = await fetch(`${g.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      message = await res.json();
      streamed = await (await fetch(`${g.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify({ ...body, stream: true }) })).text();
    });
    expect(models).toEqual(["gpt-5.2", "gpt-5.2"]);
    expect(message.model).toBe("claude-sonnet-4-5");
    expect(streamed).toContain('"model":"claude-sonnet-4-5"');
    expect(streamed).not.toContain("gpt-5.2");
  });
});
