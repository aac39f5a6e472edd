/**
 * The floor of any Bun gateway: Bun.serve + fetch, forwarding /v1/* to the upstream with the upstream's key and
 * streaming the reply body straight through. No auth, no parsing, no logging.
 *
 * `bun bench/baseline-proxy.ts PORT UPSTREAM_BASE_URL` (UPSTREAM_BASE_URL ends with its version prefix, e.g. /v1).
 */
export {};

const port = Number(process.argv[2] ?? 0);
const upstream = process.argv[3] ?? "http://127.0.0.1:1/v1";
const upstreamKey = process.env.BENCH_UPSTREAM_KEY ?? "bench-upstream-key";

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
    return new Response(res.body, {
      status: res.status,
      headers: { "content-type": res.headers.get("content-type") ?? "application/octet-stream" },
    });
  },
});

process.stdout.write(`listening ${server.port}\n`);
