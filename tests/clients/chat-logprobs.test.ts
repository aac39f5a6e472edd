/**
 * Chat Completions `logprobs` / `top_logprobs` through the Responses API and back, with the openai SDK: the
 * upstream is asked with top_logprobs and include message.output_text.logprobs, and its entries come back as
 * choices[].logprobs.content (collected and streamed); without logprobs nothing is asked and the field is null.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { startPoolOfTwo, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;
let client: OpenAI;
const TEXT = "one two three four";

beforeAll(async () => {
  pool = await startPoolOfTwo({ scenario: { kind: "text", text: TEXT, deltas: 4 } });
  upstream = pool.upstream;
  g = await startGantry({ config: pool.config });
  client = new OpenAI({ apiKey: await g.createKey(), baseURL: `${g.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await g.stop();
  await pool.close();
});

const lastUpstreamBody = () => upstream.requests.filter((r) => r.path.endsWith("/responses")).at(-1)!.body;
const messages = [{ role: "user" as const, content: "count" }];

test("collected: one entry per token, with its alternatives; the tokens spell the text", async () => {
  const res = await client.chat.completions.create({ model: "gpt-test", messages, logprobs: true, top_logprobs: 2 });
  expect(lastUpstreamBody().top_logprobs).toBe(2);
  expect(lastUpstreamBody().include).toContain("message.output_text.logprobs");
  const content = res.choices[0]!.logprobs!.content!;
  expect(content.map((e) => e.token).join("")).toBe(TEXT);
  for (const e of content) {
    expect(e.logprob).toBeLessThanOrEqual(0);
    expect(e.top_logprobs).toHaveLength(2);
    expect(Buffer.from(e.bytes!).toString("utf8")).toBe(e.token);
  }
});

test("streamed: each content chunk carries the entries of its tokens", async () => {
  const stream = await client.chat.completions.create({ model: "gpt-test", messages, logprobs: true, stream: true });
  const tokens: string[] = [];
  let text = "";
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta?.content) text += choice.delta.content;
    for (const e of choice?.logprobs?.content ?? []) tokens.push(e.token);
  }
  expect(text).toBe(TEXT);
  expect(tokens.join("")).toBe(TEXT);
});

test("not asked: nothing requested upstream, logprobs null; top_logprobs without logprobs is a 400", async () => {
  const res = await client.chat.completions.create({ model: "gpt-test", messages });
  expect(res.choices[0]!.logprobs).toBeNull();
  expect(lastUpstreamBody().top_logprobs).toBeUndefined();
  expect(lastUpstreamBody().include ?? []).not.toContain("message.output_text.logprobs");
  const err = await client.chat.completions.create({ model: "gpt-test", messages, top_logprobs: 3 }).catch((e) => e);
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect(err.param).toBe("logprobs");
});
