/**
 * Upstream quirks absorbed, over HTTP against a fake upstream as strict as the real stream-only one:
 * a parameter it refuses as unsupported is dropped and the call retried once, then left out from the start for
 * that model (logged once); GANTRY_UPSTREAM_DROP_PARAMS never sends the ones it names; a key's max-tokens bound is
 * sent upstream when the request omits the field or sends null.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, type Gantry } from "../support/harness";

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
