/**
 * A reply the caller receives whole is always billed: when the ledger cannot record a call (its database went
 * away at that moment), the answer is withheld - a 503 for a collected reply, a failure event instead of the end
 * of a stream - and the server goes on once the ledger works again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let failing = false;

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "an answer" } });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  key = await g.createKey();
  const ledger = g.deps.ledger as { record: (...args: unknown[]) => Promise<unknown> };
  const record = ledger.record.bind(ledger);
  ledger.record = (...args: unknown[]) => (failing ? Promise.reject(new Error("connection to the database lost")) : record(...args));
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const post = (path: string, body: object) =>
  fetch(`${g.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

test("unrecorded answers are withheld, collected or streamed, on both endpoints; then it works again", async () => {
  failing = true;
  const collected = await post("/v1/responses", { model: "m", input: "hi" });
  expect(collected.status).toBe(503);
  expect(collected.headers.get("retry-after")).toBe("1");
  expect((await collected.json()).error.code).toBe("service_unavailable");

  const streamed = await readSseData(await post("/v1/responses", { model: "m", input: "hi", stream: true }));
  expect(streamed.some((e) => e.type === "response.completed")).toBe(false);
  expect(streamed.at(-1)).toMatchObject({ type: "response.failed", response: { error: { code: "service_unavailable" } } });

  const chat = await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] });
  expect(chat.status).toBe(503);
  await chat.arrayBuffer();
  const chatStream = await readSseData(await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }], stream: true }));
  expect(chatStream.at(-1)).toBe("[DONE]");
  expect(chatStream.at(-2)).toMatchObject({ error: { code: "service_unavailable" } });
  expect(chatStream.some((c) => c !== "[DONE]" && c.choices?.some((x: any) => x.finish_reason !== null))).toBe(false);

  failing = false;
  const again = await post("/v1/responses", { model: "m", input: "hi" });
  expect(again.status).toBe(200);
  expect((await again.json()).output_text).toBe("an answer");
});
