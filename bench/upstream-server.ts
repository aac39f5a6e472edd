/**
 * The fake upstream of the benchmarks, run as its own process: `bun bench/upstream-server.ts PORT`.
 *
 * - POST /v1/responses: a fixed, pre-encoded Responses event stream with 20 text deltas, sent at once (no delay).
 *   A request whose model starts with "slow" gets the slow stream instead: the opening events at once, then one
 *   delta per SLOW_DELTA_MS until SLOW_HOLD_MS have passed, then the rest (for the open-streams scenario).
 * - GET /v1/models: a fixed model list.
 * - Under /fail-503/ and /fail-event/ (an account base URL such as http://127.0.0.1:PORT/fail-503/v1), the same
 *   routes fail before any content, on every call: POST .../responses answers 503 with a short JSON error, or a
 *   stream of `response.created` then an `error` event (for the pool's failover scenarios, bench/pool-failover.ts).
 *
 * Bytes are built once from the same event builders the demo's simulated upstream uses, with a fixed id and
 * timestamp, so every run sends identical bytes.
 */
import { benchStreamFrames } from "./upstream-frames";

const port = Number(process.argv[2] ?? 0);
const SLOW_DELTA_MS = Number(process.env.BENCH_SLOW_DELTA_MS ?? 1000);
const SLOW_HOLD_MS = Number(process.env.BENCH_SLOW_HOLD_MS ?? 60_000);

const encoder = new TextEncoder();
const FAST_STREAM = encoder.encode(benchStreamFrames().join(""));
const SLOW_FRAMES = benchStreamFrames("slow-model").map((f) => encoder.encode(f));
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

const MODELS = encoder.encode(
  JSON.stringify({
    object: "list",
    data: [
      "demo-mini",
      "demo-large",
      "gpt-5.4",
      "gpt-5.4-mini",
      "gpt-5.4-nano",
      "gpt-5.3-codex",
      "gpt-5.2",
      "gpt-5.1",
      "gpt-5",
      "gpt-5-mini",
      "gpt-4.1",
      "gpt-4.1-mini",
      "o4-mini",
      "o3",
      "text-embedding-3-large",
      "slow-model",
    ].map((id) => ({ id, object: "model", created: 1_760_000_000, owned_by: "bench" })),
  }),
);

/** Opening frames (created, in_progress, item added, part added) at once, a delta per tick, the rest at the end. */
function slowStream(signal: AbortSignal): ReadableStream<Uint8Array> {
  const opening = 4;
  let next = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const started = Date.now();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (; next < opening; next++) controller.enqueue(SLOW_FRAMES[next]);
      const stop = () => {
        clearInterval(timer);
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      signal.addEventListener("abort", stop, { once: true });
      timer = setInterval(() => {
        try {
          const held = Date.now() - started >= SLOW_HOLD_MS;
          // The last four frames (text/part/item done, completed) wait for the end; deltas trickle until then.
          if (!held && next < SLOW_FRAMES.length - 4) {
            controller.enqueue(SLOW_FRAMES[next++]);
            return;
          }
          if (!held) return;
          for (; next < SLOW_FRAMES.length; next++) controller.enqueue(SLOW_FRAMES[next]);
          stop();
        } catch {
          stop();
        }
      }, SLOW_DELTA_MS);
    },
    cancel() {
      clearInterval(timer);
    },
  });
}

const FAIL_503 = encoder.encode(JSON.stringify({ error: { message: "The server is overloaded.", type: "server_error", code: null, param: null } }));
const FAIL_EVENT = encoder.encode(
  `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_fail", object: "response", created_at: 1_760_000_000, status: "in_progress", model: "demo-mini", output: [] } })}\n\n` +
    `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: 1, code: "server_error", message: "The server had an error.", param: null })}\n\n`,
);

/** A failing account's reply (see the header), or null for a path without a fault prefix. */
async function fault(req: Request, path: string): Promise<Response | null> {
  const kind = path.startsWith("/fail-503/") ? "503" : path.startsWith("/fail-event/") ? "event" : null;
  if (kind === null) return null;
  const rest = path.slice(path.indexOf("/", 1));
  if (rest === "/v1/models") return new Response(MODELS, { headers: { "content-type": "application/json" } });
  if (rest !== "/v1/responses" || req.method !== "POST") return null;
  await req.arrayBuffer();
  if (kind === "503") return new Response(FAIL_503, { status: 503, headers: { "content-type": "application/json" } });
  return new Response(FAIL_EVENT, { headers: SSE_HEADERS });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path.startsWith("/fail-")) {
      const failed = await fault(req, path);
      if (failed) return failed;
    }
    if (path === "/v1/responses" && req.method === "POST") {
      const body = await req.text();
      if (body.includes('"model":"slow')) return new Response(slowStream(req.signal), { headers: SSE_HEADERS });
      return new Response(FAST_STREAM, { headers: SSE_HEADERS });
    }
    if (path === "/v1/models") return new Response(MODELS, { headers: { "content-type": "application/json" } });
    return new Response(JSON.stringify({ error: { message: `no route ${path}`, type: "invalid_request_error" } }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  },
});

process.stdout.write(`listening ${server.port}\n`);
