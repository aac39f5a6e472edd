/**
 * In-process costs of the pure per-request pieces of a streamed gateway request, in µs per request (no HTTP,
 * no processes): what part of the server CPU measured by `bun run bench` is the gateway's own logic.
 *   bun bench/micro.ts [--iterations N]
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { GANTRY_SOURCE } from "./servers";
import type { ResponsesStreamEvent } from "../src/gateway/wire/responses-types";
// From the checkout under test (GANTRY_BENCH_SOURCE), so two versions of the code can be compared.
const src = (p: string) => import(join(GANTRY_SOURCE, "src", p));
// The pure wire code lives in gateway/wire/ (gateway/stream/ in checkouts before issue 32).
const wire = (p: string) => src(`gateway/wire/${p}`).catch(() => src(`gateway/stream/${p}`));
const { createSseDecoder, parseStreamEvent } = await wire("sse-decode.ts");
const { encodeData, encodeEvent } = await wire("sse-encode.ts");
const { normalizeResponsesRequest } = await src("gateway/translate/normalize.ts");
const { createResponsesStreamRewriter } = await wire("stream-rewrite.ts");
const { createChatStreamTranslator } = await src("gateway/translate/stream-to-chat.ts");
const { chatToResponses } = await src("gateway/translate/chat-to-responses.ts");
const { createResponseCollector } = await wire("collect.ts");
const { sha256Hex } = await src("secrets.ts");
import { benchStreamFrames } from "./upstream-frames";
import { RESPONSES_STREAM_BODY } from "./scenarios";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { iterations: { type: "string" } } });
const N = Number(values.iterations ?? 20_000);

const streamText = benchStreamFrames().join("");
const streamBytes = new TextEncoder().encode(streamText);
const chatBody = JSON.stringify({ model: "demo-mini", stream: true, messages: [{ role: "system", content: "You are terse." }, { role: "user", content: "Say hello to the benchmark." }] });
const options = { defaultInstructions: "You are a helpful assistant.", modelOverrides: { "gpt-5.4": { reasoningEffort: "xhigh" } } };

function events(): Array<{ data: string; ev: ResponsesStreamEvent }> {
  const dec = createSseDecoder();
  return dec.push(streamBytes).concat(dec.end()).map((sse: { data: string }) => ({ data: sse.data, ev: parseStreamEvent(sse) as ResponsesStreamEvent }));
}

/** Best of 5 rounds: the least disturbed by whatever else the machine is doing. */
function time(label: string, fn: () => unknown): void {
  for (let i = 0; i < Math.min(2000, N); i++) fn();
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 5; r++) {
    Bun.gc(true);
    const t = performance.now();
    for (let i = 0; i < N; i++) fn();
    best = Math.min(best, ((performance.now() - t) * 1000) / N);
  }
  process.stdout.write(`${best.toFixed(2).padStart(8)} µs  ${label}\n`);
}

process.stdout.write(`${GANTRY_SOURCE}: per request (best of 5 × ${N} iterations; the stream is ${streamBytes.length} bytes, ${events().length} events)\n`);
time("sha256 of the API key (authenticate)", () => sha256Hex("gk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"));
time("JSON.parse of the request body", () => JSON.parse(RESPONSES_STREAM_BODY));
time("normalizeResponsesRequest + JSON.stringify", () => JSON.stringify(normalizeResponsesRequest(JSON.parse(RESPONSES_STREAM_BODY), options)));
time("chatToResponses + normalize + stringify", () => JSON.stringify(normalizeResponsesRequest(chatToResponses(JSON.parse(chatBody)).request, options)));
time("SSE decode (bytes -> events)", () => {
  const d = createSseDecoder();
  d.push(streamBytes);
  d.end();
});
time("SSE decode + parseStreamEvent", () => events());
const evs = events();
time("stream rewriter (markup cleaning) over the events", () => {
  const r = createResponsesStreamRewriter({ toolNames: new Set() });
  for (const { ev } of evs) r.push(ev);
  r.finish();
});
time("re-encode: pass-through events as raw text", () => {
  let out = "";
  for (const { data, ev } of evs) out += `event: ${ev.type}\ndata: ${data}\n\n`;
  return out;
});
time("re-encode: every event with JSON.stringify", () => {
  let out = "";
  for (const { ev } of evs) out += encodeEvent(ev);
  return out;
});
time("chat stream translator + encodeData", () => {
  const t = createChatStreamTranslator({ id: "chatcmpl-x", created: 1, model: "demo-mini", includeUsage: false });
  let out = "";
  for (const { ev } of evs) for (const o of t.push(ev)) out += encodeData(o);
  for (const o of t.finish()) out += encodeData(o);
  return out;
});
time("collector (stream:false) + JSON.stringify", () => {
  const c = createResponseCollector();
  for (const { ev } of evs) c.push(ev);
  return JSON.stringify(c.result());
});

// The stream pipeline's event handling (issue 20), when the checkout has it: the same stream read the old way (every
// event parsed and pushed through the rewriter) and the pipeline's way (classified, unread events skipped).
const pipeline = await wire("stream-event.ts").catch(() => null);
time("responses events, every event parsed, rewritten, framed", () => {
  const d = createSseDecoder();
  const r = createResponsesStreamRewriter({ toolNames: new Set() });
  let out = "";
  for (const sse of d.push(streamBytes)) {
    const ev = parseStreamEvent(sse) as ResponsesStreamEvent;
    for (const o of r.push(ev)) out += o === ev ? `event: ${ev.type}\ndata: ${sse.data}\n\n` : encodeEvent(o);
  }
  return out;
});
if (pipeline) {
  time("responses events, the pipeline's way (classified, unread ones skipped)", () => {
    const d = createSseDecoder();
    const r = createResponsesStreamRewriter({ toolNames: new Set() });
    let out = "";
    for (const sse of d.push(streamBytes)) {
      const e = pipeline.classify(sse);
      if (e === "done") continue;
      if (pipeline.isUnread(e) && r.skips(e)) {
        out += `event: ${e.type}\ndata: ${e.data}\n\n`;
        continue;
      }
      for (const o of r.push(e.ev, e.data)) out += o === e.ev ? `event: ${e.type}\ndata: ${e.data}\n\n` : encodeEvent(o);
    }
    return out;
  });
}
