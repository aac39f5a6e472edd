/**
 * The floors of any Bun gateway, forwarding /v1/* to the upstream with the upstream's key. No auth, no logging.
 *
 * - `pipe` (the bare proxy): Bun.serve + fetch, the reply body handed to the response as it is, so Bun moves the
 *   bytes natively and no JavaScript runs per chunk.
 * - `relay` (the minimal JavaScript relay): the same, but the body is read in JavaScript, split into SSE frames and
 *   given back chunk by chunk, and the terminal event's JSON is parsed for its usage. The least any gateway that
 *   reads the events for metering does; what Gantry's stream scenarios would cost with nothing else to do.
 *
 * `bun bench/baseline-proxy.ts PORT UPSTREAM_BASE_URL [pipe|relay]` (UPSTREAM_BASE_URL ends with its version
 * prefix, e.g. /v1).
 */
export {};

const port = Number(process.argv[2] ?? 0);
const upstream = process.argv[3] ?? "http://127.0.0.1:1/v1";
const mode = process.argv[4] ?? "pipe";
const upstreamKey = process.env.BENCH_UPSTREAM_KEY ?? "bench-upstream-key";
const TERMINAL = "event: response.completed\n";

/** The upstream body as text chunks; the terminal event's usage is read on the way (the relay's metering). */
async function* relayed(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const text = new TextDecoder();
  let pending = "";
  let usage: unknown = null;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += text.decode(value, { stream: true });
    const cut = pending.lastIndexOf("\n\n");
    if (cut < 0) continue;
    const frames = pending.slice(0, cut + 2);
    pending = pending.slice(cut + 2);
    const at = frames.indexOf(TERMINAL);
    if (at >= 0) {
      const data = frames.indexOf("data: ", at) + 6;
      usage = (JSON.parse(frames.slice(data, frames.indexOf("\n", data))) as { response?: { usage?: unknown } }).response?.usage ?? null;
    }
    yield frames;
  }
  if (pending) yield pending;
  if (usage === null) process.stderr.write("relay: a stream ended without usage\n");
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  idleTimeout: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (!url.pathname.startsWith("/v1/")) return new Response("not found", { status: 404 });
    const headers: Record<string, string> = { authorization: `Bearer ${upstreamKey}` };
    const type = req.headers.get("content-type");
    if (type) headers["content-type"] = type;
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
    const res = await fetch(upstream + url.pathname.slice(3) + url.search, { method: req.method, headers, body, signal: req.signal });
    const contentType = res.headers.get("content-type") ?? "application/octet-stream";
    const out = mode === "relay" && res.body && contentType.startsWith("text/event-stream") ? (relayed(res.body) as unknown as BodyInit) : res.body;
    return new Response(out, { status: res.status, headers: { "content-type": contentType } });
  },
});

process.stdout.write(`listening ${server.port}\n`);
