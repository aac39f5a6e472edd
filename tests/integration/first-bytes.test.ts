/**
 * No stream holds its first bytes: whatever the caller gets (Responses events kept or not, chat chunks, the raw
 * bytes), the upstream's first text delta reaches it while the upstream has sent nothing more and keeps the stream
 * open. The upstream here sends its first five events (the delta is the fifth) and then goes silent: a gateway that
 * waited for more before writing would never show the delta, and the case would run into the test's timeout. No
 * timing is measured; only what has arrived while the upstream is silent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  // Lenient: raw passthrough sends the caller's body as it is.
  upstream = await startFakeUpstream({ lenient: true, scenario: { kind: "hang-mid-stream", afterEvents: 5 } });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const NONE: Record<string, string> = {};

const cases = [
  { name: "responses, kept", path: "/v1/responses", body: { model: "demo-mini", input: "x", stream: true }, headers: NONE, delta: /event: response\.output_text\.delta\ndata: \{[^\n]*"delta":"[^"]+"/ },
  { name: "responses, store:false", path: "/v1/responses", body: { model: "demo-mini", input: "x", stream: true, store: false }, headers: NONE, delta: /event: response\.output_text\.delta\ndata: \{[^\n]*"delta":"[^"]+"/ },
  { name: "chat", path: "/v1/chat/completions", body: { model: "demo-mini", messages: [{ role: "user", content: "x" }], stream: true }, headers: NONE, delta: /"delta":\{"content":"[^"]+"\}/ },
  { name: "raw", path: "/v1/responses", body: { model: "demo-mini", input: "x", stream: true }, headers: { "x-upstream-mode": "raw" }, delta: /response\.output_text\.delta[^\n]*\ndata: \{[^\n]*"delta":"[^"]+"/ },
];

test.each(cases)(
  "$name: the first delta arrives while the upstream is still silent",
  async (c) => {
    const controller = new AbortController();
    // Waits for the delta, however long: a gateway holding it would never show it (Bun sends a streamed reply's
    // headers with its first bytes), and the test's own timeout fails the case.
    const res = await fetch(`${g.url}${c.path}`, { ...authed(await g.createKey(), c.body, c.headers), signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    try {
      while (!c.delta.test(text)) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toMatch(c.delta);
      // The upstream has not ended: the delta came ahead of anything that would end the reply.
      expect(upstream.open).toBe(1);
      expect(text).not.toContain("response.completed");
    } finally {
      controller.abort();
      await reader.cancel().catch(() => {});
    }
    // The caller went away: the upstream request is let go (the next case starts from none open).
    await pollUntil(() => upstream.open, (n) => n === 0, { what: "the upstream request to be released" });
  },
  20_000,
);
