/**
 * What a reply body costs by how it is made, with nothing else in the server: the numbers behind "a body produced
 * by JavaScript costs more than a natively piped one" in docs/performance.md.
 *   bun bench/body-kinds.ts [--duration S]
 * Each kind runs as its own server (`--serve KIND PORT [UPSTREAM]`) on CPU 0, loaded by wrk from CPU 1 (32
 * connections); CPU per request from /proc. From memory (three SSE frames): a string, an async generator, Bun's
 * `type: "direct"` ReadableStream, a default ReadableStream. Relaying the bench's fake upstream stream: piped
 * natively, read with a reader, with `for await`, read whole as text.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runWrk } from "./load";
import { measure } from "./proc-stats";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { BUN, UPSTREAM_KEY, freePort, spawnServer, startUpstream } from "./servers";

const MEMORY = ["string", "generator", "direct", "stream"] as const;
const RELAY = ["pipe", "reader", "for-await", "text"] as const;
type Kind = (typeof MEMORY)[number] | (typeof RELAY)[number];

const FRAMES = [600, 2000, 900].map((n, i) => `event: e${i}\ndata: ${"x".repeat(n)}\n\n`);
const SSE = { "content-type": "text/event-stream" };

async function* frames(): AsyncGenerator<string> {
  for (const f of FRAMES) {
    await null;
    yield f;
  }
}

function fromMemory(kind: Kind): Response {
  if (kind === "string") return new Response(FRAMES.join(""), { headers: SSE });
  if (kind === "generator") return new Response(frames() as unknown as BodyInit, { headers: SSE });
  const it = frames();
  if (kind === "direct") {
    const direct = {
      type: "direct",
      async pull(c: { write(s: string): void; flush(): unknown; close(): void }) {
        for (let n = await it.next(); !n.done; n = await it.next()) {
          c.write(n.value);
          await c.flush();
        }
        c.close();
      },
    };
    return new Response(new ReadableStream(direct as unknown as UnderlyingDefaultSource), { headers: SSE });
  }
  const bytes = new TextEncoder();
  return new Response(
    new ReadableStream({
      async pull(c) {
        const n = await it.next();
        if (n.done) c.close();
        else c.enqueue(bytes.encode(n.value));
      },
    }),
    { headers: SSE },
  );
}

async function relayed(kind: Kind, upstream: string): Promise<Response> {
  const res = await fetch(upstream, { method: "POST", headers: { authorization: `Bearer ${UPSTREAM_KEY}`, "content-type": "application/json" }, body: RESPONSES_STREAM_BODY });
  const body = res.body!;
  const text = new TextDecoder();
  if (kind === "pipe") return new Response(body, { headers: SSE });
  if (kind === "text") return new Response((async function* () { yield await res.text(); })() as unknown as BodyInit, { headers: SSE });
  if (kind === "for-await") {
    return new Response((async function* () { for await (const c of body as unknown as AsyncIterable<Uint8Array>) yield text.decode(c, { stream: true }); })() as unknown as BodyInit, { headers: SSE });
  }
  const reader = body.getReader();
  return new Response(
    (async function* () {
      for (let r = await reader.read(); !r.done; r = await reader.read()) yield text.decode(r.value, { stream: true });
    })() as unknown as BodyInit,
    { headers: SSE },
  );
}

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { serve: { type: "string" }, duration: { type: "string" } }, allowPositionals: true });

if (values.serve) {
  const kind = values.serve as Kind;
  const upstream = positionals[1] ?? "";
  Bun.serve({
    hostname: "127.0.0.1",
    port: Number(positionals[0]),
    idleTimeout: 0,
    fetch: (req) => (new URL(req.url).pathname === "/ready" ? new Response("ok") : MEMORY.includes(kind as never) ? fromMemory(kind) : relayed(kind, upstream)),
  });
} else {
  const duration = Number(values.duration ?? 5);
  const workDir = mkdtempSync(join(tmpdir(), "gantry-body-kinds-"));
  const upstream = await startUpstream(workDir, "1");
  process.stdout.write(`CPU per request, ${duration} s each after 2 s of warm-up, 32 connections (server on CPU 0, wrk and upstream on CPU 1)\n`);
  for (const kind of [...MEMORY, ...RELAY]) {
    const port = await freePort();
    const proc = await spawnServer({ name: `body-${kind}`, cmd: [BUN, import.meta.path, "--serve", kind, String(port), upstream.url + "/v1/responses"], port, readyPath: "/ready", workDir, cpus: "0" });
    const load = { baseUrl: proc.url, request: { method: "GET" as const, path: "/" }, connections: 32, workDir, cpus: "1" };
    await runWrk({ ...load, durationSeconds: 2 });
    const m = measure([proc.pid]);
    const r = await runWrk({ ...load, durationSeconds: duration });
    const cpu = m.stop().cpuSeconds;
    process.stdout.write(`${((cpu * 1e6) / r.requests).toFixed(1).padStart(7)} µs  ${MEMORY.includes(kind as never) ? "from memory" : "relayed    "}  ${kind}${r.statusErrors ? ` (${r.statusErrors} errors)` : ""}\n`);
    await proc.stop();
  }
  await upstream.stop();
  rmSync(workDir, { recursive: true, force: true });
}
