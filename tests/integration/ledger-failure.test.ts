/**
 * A reply the caller receives whole is always billed: when the ledger cannot record a call (its database went
 * away at that moment), the answer is withheld - a 503 for a collected reply, a failure event instead of the end
 * of a stream - new requests are refused at admission while it cannot (503, before any upstream work), and the
 * server goes on by itself once the ledger works again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let failing = false;

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "an answer" } });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  key = await g.createKey();
  const ledger = g.deps.ledger as { record: (...args: unknown[]) => Promise<unknown>; probe: () => Promise<void> };
  const record = ledger.record.bind(ledger);
  const probe = ledger.probe.bind(ledger);
  const lost = () => Promise.reject(new Error("connection to the database lost"));
  ledger.record = (...args: unknown[]) => (failing ? lost() : record(...args));
  ledger.probe = () => (failing ? lost() : probe());
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const post = (path: string, body: object) =>
  fetch(`${g.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

/** Runs `call` while the ledger fails, then lets it work again and waits until requests are taken. */
async function whileLedgerFails<T>(call: () => Promise<T>): Promise<T> {
  failing = true;
  try {
    return await call();
  } finally {
    failing = false;
    await pollUntil(() => g.deps.ledgerHealth.writable, Boolean, { what: "the ledger to be written again", timeoutMs: 10_000 });
  }
}

test("unrecorded answers are withheld, collected or streamed, on both endpoints; then it works again", async () => {
  await whileLedgerFails(async () => {
    const collected = await post("/v1/responses", { model: "m", input: "hi" });
    expect(collected.status).toBe(503);
    expect(collected.headers.get("retry-after")).toBe("1");
    expect((await collected.json()).error.code).toBe("service_unavailable");
  });

  await whileLedgerFails(async () => {
    const streamed = await readSseData(await post("/v1/responses", { model: "m", input: "hi", stream: true }));
    expect(streamed.some((e) => e.type === "response.completed")).toBe(false);
    expect(streamed.at(-1)).toMatchObject({ type: "response.failed", response: { error: { code: "service_unavailable" } } });
    // Opened as every Responses stream is, though the whole answer came with its end (SDKs expect it first).
    expect(streamed[0].type).toBe("response.created");
    // The failure does not carry the answer it withholds (its snapshot was the terminal response, output and all).
    expect(streamed.at(-1).response.output).toEqual([]);
    expect(JSON.stringify(streamed.at(-1))).not.toContain("an answer");
  });

  await whileLedgerFails(async () => {
    const chat = await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(503);
    await chat.arrayBuffer();
  });

  await whileLedgerFails(async () => {
    const chatStream = await readSseData(await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }], stream: true }));
    expect(chatStream.at(-1)).toBe("[DONE]");
    expect(chatStream.at(-2)).toMatchObject({ error: { code: "service_unavailable" } });
    expect(chatStream.some((c) => c !== "[DONE]" && c.choices?.some((x: any) => x.finish_reason !== null))).toBe(false);
  });

  const again = await post("/v1/responses", { model: "m", input: "hi" });
  expect(again.status).toBe(200);
  expect((await again.json()).output_text).toBe("an answer");
});

test("the Messages dialect withholds the same way: 529 overloaded_error collected, an error event instead of the stream's end", async () => {
  await whileLedgerFails(async () => {
    const messages = await post("/v1/messages", { model: "m", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(messages.status).toBe(529);
    expect(await messages.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: expect.any(String) } });
  });

  await whileLedgerFails(async () => {
    // Anthropic's stream: the end (message_delta, message_stop) replaced by an in-band error event.
    const text = await (await post("/v1/messages", { model: "m", max_tokens: 50, messages: [{ role: "user", content: "hi" }], stream: true })).text();
    expect(text).not.toContain("message_stop");
    expect(text.trimEnd().split("\n\n").at(-1)).toStartWith('event: error\ndata: {"type":"error","error":{"type":"overloaded_error"');
  });
});

test("after a failed write, new requests are refused before the upstream until a probe write succeeds", async () => {
  failing = true;
  try {
    expect((await post("/v1/responses", { model: "m", input: "hi" })).status).toBe(503);
    const calls = upstream.requests.length;
    const refused = await post("/v1/responses", { model: "m", input: "hi", stream: true });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect((await refused.json()).error.code).toBe("service_unavailable");
    expect(upstream.requests.length).toBe(calls);
  } finally {
    failing = false;
  }
  const { elapsedMs } = await pollUntil(() => post("/v1/responses", { model: "m", input: "hi" }), (r) => r.status === 200, { what: "requests to be taken again", timeoutMs: 10_000, stepMs: 50 });
  expect(elapsedMs).toBeLessThan(5000);
});
