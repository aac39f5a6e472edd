/**
 * Upstream quirks absorbed, over HTTP against a fake upstream as strict as the real stream-only one:
 * a parameter it refuses as unsupported is dropped and the call retried once, then left out from the start for
 * that model (logged once); GANTRY_UPSTREAM_DROP_PARAMS never sends the ones it names; a key's max-tokens bound is
 * sent upstream when the request omits the field or sends null, and enforced by Gantry when the upstream refuses it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import OpenAI from "openai";
import { readSseData, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let bounded: string;

beforeAll(async () => {
  upstream = await startFakeUpstream({ unsupportedParams: ["temperature", "max_output_tokens_x"], scenario: { kind: "text", text: "fine" } });
  g = await startGantry({ config: { upstreamUrl: upstream.url, upstreamDropParams: ["top_p"] }, captureLogs: true });
  key = await g.createKey();
  bounded = await g.createKey({ maxTokens: 100 });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

function post(path: string, body: object, secret = key): Promise<Response> {
  return fetch(`${g.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The bodies the upstream received for requests made by `fn`. */
async function received(fn: () => Promise<void>): Promise<any[]> {
  const before = upstream.requests.length;
  await fn();
  return upstream.requests.slice(before).filter((r) => r.path.endsWith("/responses")).map((r) => r.body);
}

const learnt = () => g.logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).includes("refuses a parameter"));

describe("unsupported parameters", () => {
  test("refused once: dropped, retried, answered; the next call leaves it out from the start; one log line", async () => {
    const first = await received(async () => {
      const res = await post("/v1/responses", { model: "gpt-quirk", input: "hi", temperature: 0.2, stream: true });
      expect(res.status).toBe(200);
      const events = await readSseData(res);
      expect(events.some((e) => e.type === "response.completed")).toBe(true);
    });
    expect(first.map((b) => "temperature" in b)).toEqual([true, false]);
    const next = await received(async () => {
      const res = await post("/v1/responses", { model: "gpt-quirk", input: "again", temperature: 0.7 });
      expect(res.status).toBe(200);
      expect((await res.json()).status).toBe("completed");
    });
    expect(next.map((b) => "temperature" in b)).toEqual([false]);
    // Through chat completions too (the same model, already learnt).
    const chat = await received(async () => {
      const res = await post("/v1/chat/completions", { model: "gpt-quirk", messages: [{ role: "user", content: "hi" }], temperature: 1 });
      expect(res.status).toBe(200);
    });
    expect(chat.map((b) => "temperature" in b)).toEqual([false]);
    expect(learnt()).toHaveLength(1);
    expect(learnt()[0]).toMatchObject({ model: "gpt-quirk", param: "temperature" });
  });

  test("learnt per model: another model gets the parameter until its upstream refuses it too", async () => {
    const bodies = await received(async () => {
      expect((await post("/v1/responses", { model: "gpt-other", input: "hi", temperature: 0.2 })).status).toBe(200);
    });
    expect(bodies.map((b) => "temperature" in b)).toEqual([true, false]);
    expect(learnt().map((l) => l.model)).toEqual(["gpt-quirk", "gpt-other"]);
  });

  test("GANTRY_UPSTREAM_DROP_PARAMS: never sent", async () => {
    const bodies = await received(async () => {
      expect((await post("/v1/responses", { model: "gpt-quirk", input: "hi", top_p: 0.5 })).status).toBe(200);
    });
    expect(bodies).toHaveLength(1);
    expect("top_p" in bodies[0]).toBe(false);
  });

  test("any parameter the upstream names is dropped, even one it does not know; other refusals reach the caller as before", async () => {
    const bodies = await received(async () => {
      const res = await post("/v1/responses", { model: "gpt-quirk", input: "hi", max_output_tokens_x: 5 });
      expect(res.status).toBe(200);
    });
    expect(bodies.map((b) => "max_output_tokens_x" in b)).toEqual([true, false]);
    const refused = await post("/v1/responses", { model: "gpt-quirk", input: "hi", stream: false, store: true, instructions: 5 });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.param).toBe("instructions");
  });
});

/**
 * LlamaIndex's OpenAIResponses sends `instructions: ""`, which the upstream refuses ("Instructions are required"):
 * empty or blank instructions count as absent, on both endpoints, and the default goes upstream instead.
 */
describe("empty instructions", () => {
  test("responses and chat: blank instructions or system messages are replaced by the default, and the call is answered", async () => {
    const bodies = await received(async () => {
      for (const instructions of ["", "  \n"]) {
        const res = await post("/v1/responses", { model: "gpt-plain", input: "hi", instructions });
        expect(res.status).toBe(200);
        expect((await res.json()).status).toBe("completed");
      }
      const chat = await post("/v1/chat/completions", { model: "gpt-plain", messages: [{ role: "system", content: "" }, { role: "user", content: "hi" }] });
      expect(chat.status).toBe(200);
    });
    expect(bodies.map((b) => b.instructions)).toEqual(["You are a helpful assistant.", "You are a helpful assistant.", "You are a helpful assistant."]);
  });

  test("the openai SDK with instructions: \"\" gets its answer", async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const r = await client.responses.create({ model: "gpt-plain", input: "hi", instructions: "" });
    expect(r.output_text).toBe("fine");
  });
});

describe("a key's max-tokens bound", () => {
  test("sent upstream when the request omits max_output_tokens or sends null; an explicit lower value is kept", async () => {
    const bodies = await received(async () => {
      for (const extra of [{}, { max_output_tokens: null }, { max_output_tokens: 40 }]) {
        expect((await post("/v1/responses", { model: "gpt-bound", input: "hi", ...extra }, bounded)).status).toBe(200);
      }
      expect((await post("/v1/chat/completions", { model: "gpt-bound", messages: [{ role: "user", content: "hi" }] }, bounded)).status).toBe(200);
    });
    expect(bodies.map((b) => b.max_output_tokens)).toEqual([100, 100, 40, 100]);
  });

  test("a key without a bound sends none", async () => {
    const bodies = await received(async () => {
      expect((await post("/v1/responses", { model: "gpt-bound", input: "hi" })).status).toBe(200);
    });
    expect("max_output_tokens" in bodies[0]).toBe(false);
  });
});

/**
 * An upstream that refuses `max_output_tokens`: the field is dropped, and Gantry ends the output at the bound
 * itself (about four UTF-8 bytes a token), with status incomplete and reason max_output_tokens, as OpenAI does.
 */
describe("an output bound the upstream refused, enforced by Gantry", () => {
  const WORDS = Array.from({ length: 120 }, (_, i) => `w${i}`).join(" ");
  let refusing: FakeUpstream;
  let h: Gantry;
  let limited: string;
  let open: string;

  beforeAll(async () => {
    refusing = await startFakeUpstream({
      unsupportedParams: ["max_output_tokens"],
      scenario: (body) => (String(JSON.stringify(body.input)).includes("short") ? { kind: "text", text: "tiny" } : { kind: "slow", delayMs: 3, text: WORDS, deltas: 120 }),
    });
    h = await startGantry({ config: { upstreamUrl: refusing.url } });
    limited = await h.createKey({ maxTokens: 10 });
    open = await h.createKey();
  });
  afterAll(async () => {
    await h.stop();
    await refusing.close();
  });

  const send = (path: string, body: object, secret: string) =>
    fetch(`${h.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const ledgerRow = async (requestId: string) =>
    (await h.query("SELECT status, error_code, endpoint, request_id, CAST(input_tokens AS DOUBLE PRECISION) AS input_tokens, CAST(output_tokens AS DOUBLE PRECISION) AS output_tokens, CAST(estimated AS INTEGER) AS estimated FROM usage_ledger WHERE request_id = $1", requestId))[0];

  test("collected: the text is cut at the key's bound, status incomplete, usage and ledger the estimate; the upstream is not read further", async () => {
    const abortedBefore = refusing.aborted;
    const res = await send("/v1/responses", { model: "gpt-b", input: "write" }, limited);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("incomplete");
    expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(Buffer.byteLength(body.output_text)).toBeLessThanOrEqual(40);
    expect(body.output_text.length).toBeGreaterThan(30);
    expect(WORDS.startsWith(body.output_text)).toBe(true);
    expect(body.output[0].status).toBe("incomplete");
    expect(body.usage.output_tokens).toBe(10);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ status: 200, output_tokens: 10, input_tokens: body.usage.input_tokens });
    // The upstream got no max_output_tokens (refused once, then left out), and its stream was cut off.
    expect(refusing.requests.filter((r) => r.path.endsWith("/responses")).every((r, i) => i === 0 || !("max_output_tokens" in r.body))).toBe(true);
    await pollUntil(() => refusing.aborted > abortedBefore, Boolean, { what: "the upstream stream to be cancelled" });
  });

  test("streamed: every open part and item is closed, then response.incomplete; sequence numbers run on", async () => {
    const res = await send("/v1/responses", { model: "gpt-b", input: "write", stream: true, max_output_tokens: 3 }, open);
    const events = await readSseData(res);
    const types = events.map((e) => e.type);
    expect(types.slice(-4)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"]);
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(12);
    expect(text.length).toBeGreaterThan(5);
    expect(events.at(-4).text).toBe(text);
    expect(events.at(-3).part).toMatchObject({ type: "output_text", text });
    expect(events.at(-2).item).toMatchObject({ status: "incomplete", content: [{ type: "output_text", text }] });
    const last = events.at(-1);
    expect(last.response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: { output_tokens: 3 } });
    expect(last.response.output[0].content[0].text).toBe(text);
    const seq = events.map((e) => e.sequence_number);
    expect(seq).toEqual(seq.map((_, i) => seq[0] + i));
  });

  test("the openai SDK reads it as an incomplete response; chat completions end with finish_reason length", async () => {
    const client = new OpenAI({ apiKey: limited, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const stream = client.responses.stream({ model: "gpt-b", input: "write" });
    let deltas = "";
    stream.on("response.output_text.delta", (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe("incomplete");
    expect(final.output_text).toBe(deltas);
    expect(Buffer.byteLength(deltas)).toBeLessThanOrEqual(40);

    const chat = await client.chat.completions.create({ model: "gpt-b", messages: [{ role: "user", content: "write" }] });
    expect(chat.choices[0].finish_reason).toBe("length");
    expect(Buffer.byteLength(chat.choices[0].message.content!)).toBeLessThanOrEqual(40);
    const chunks = await client.chat.completions.create({ model: "gpt-b", messages: [{ role: "user", content: "write" }], stream: true, stream_options: { include_usage: true } });
    let content = "";
    const reasons: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of chunks) {
      content += c.choices[0]?.delta.content ?? "";
      if (c.choices[0]) reasons.push(c.choices[0].finish_reason);
      usage ??= c.usage ?? undefined;
    }
    expect(reasons.at(-1)).toBe("length");
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(40);
    expect(usage?.completion_tokens).toBe(10);
  });

  test("multi-byte text is cut between code points, within the bound's bytes", async () => {
    refusing.setScenario({ kind: "text", text: "漢字かな😀".repeat(20), deltas: 7 });
    try {
      const body = await (await send("/v1/responses", { model: "gpt-b", input: "write" }, limited)).json();
      expect(body.status).toBe("incomplete");
      expect(Buffer.byteLength(body.output_text)).toBeLessThanOrEqual(40);
      expect(Buffer.byteLength(body.output_text)).toBeGreaterThan(30);
      expect(body.output_text).not.toContain("\uFFFD");
      expect("漢字かな😀".repeat(20).startsWith(body.output_text)).toBe(true);
    } finally {
      refusing.setScenario((b) => (String(JSON.stringify(b.input)).includes("short") ? { kind: "text", text: "tiny" } : { kind: "slow", delayMs: 3, text: WORDS, deltas: 120 }));
    }
  });

  test("an answer within the bound completes as the upstream sent it, with its usage", async () => {
    const res = await send("/v1/responses", { model: "gpt-b", input: "short" }, limited);
    const body = await res.json();
    expect(body).toMatchObject({ status: "completed", output_text: "tiny" });
    expect((await ledgerRow(res.headers.get("x-request-id")!)).output_tokens).toBe(body.usage.output_tokens);
  });
});
