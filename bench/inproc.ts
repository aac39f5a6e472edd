/**
 * In-process cost of one gateway request, without sockets: Gantry's app (createDeps + createApp, a real SQLite
 * file, the real logger writing to a file) handles requests whose upstream `fetch` returns the fake upstream's
 * bytes from memory, and the reply body is read to the end. CPU time per request (process.cpuUsage) is far less
 * noisy than the HTTP benchmarks on a busy machine, which makes it the tool for before/after comparisons of a
 * hot-path change.
 *   bun bench/inproc.ts [--iterations N] [--concurrency C] [--only responses-stream,...]
 * GANTRY_BENCH_SOURCE=/path/to/checkout measures another checkout's src/.
 */
import { mkdtempSync, openSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchStreamFrames } from "./upstream-frames";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { GANTRY_SOURCE } from "./servers";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { iterations: { type: "string" }, concurrency: { type: "string" }, only: { type: "string" }, "log-level": { type: "string" } },
});
const N = Number(values.iterations ?? 20_000);
const C = Number(values.concurrency ?? 16);

const { configFrom } = await import(join(GANTRY_SOURCE, "src/cli/common.ts"));
const { createDeps } = await import(join(GANTRY_SOURCE, "src/deps.ts"));
const { createApp } = await import(join(GANTRY_SOURCE, "src/app.ts"));
const { createLogger } = await import(join(GANTRY_SOURCE, "src/log.ts"));

const STREAM = new TextEncoder().encode(benchStreamFrames().join(""));
const MODELS = JSON.stringify({ object: "list", data: ["demo-mini", "demo-large", "gpt-5.4"].map((id) => ({ id, object: "model", created: 1, owned_by: "bench" })) });

const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = String(input instanceof Request ? input.url : input);
  if (init?.body && typeof init.body !== "string") await new Response(init.body).arrayBuffer();
  if (url.endsWith("/models")) return new Response(MODELS, { headers: { "content-type": "application/json" } });
  return new Response(STREAM, { headers: { "content-type": "text/event-stream" } });
}) as typeof fetch;

const dataDir = mkdtempSync(join(tmpdir(), "gantry-inproc-"));
const config = configFrom({ "data-dir": dataDir, "upstream-url": "http://upstream.invalid/v1", "upstream-key": "k", "admin-token": "bench-admin-token-0123456789", "log-level": values["log-level"] ?? process.env.INPROC_LOG_LEVEL ?? "info" });
const logFd = openSync(join(dataDir, "gantry.log"), "a");
// Synchronous appends, as process.stdout.write does when the server's stdout is a file.
const log = createLogger(config.logLevel, (line: string) => void writeSync(logFd, line + "\n"), false);
// createDeps is async since the stores became promise-based; a baseline tree from before returns the deps at once.
const deps = await createDeps(config, { fetch: fakeFetch, log });
const created = await deps.keys.create({ name: "bench" });
if (deps.keyCache.reload) await deps.keyCache.reload();
else deps.keyCache.reloadIfChanged();
const apiKey: string = created.secret ?? created.key;
const app = createApp(deps);

const auth = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
const chatBody = JSON.stringify({ model: "demo-mini", stream: true, messages: [{ role: "system", content: "You are terse." }, { role: "user", content: "Say hello to the benchmark." }] });
const cases: Record<string, () => Request> = {
  "responses-stream": () => new Request("http://127.0.0.1/v1/responses", { method: "POST", headers: auth, body: RESPONSES_STREAM_BODY }),
  "responses-stream-unkept": () => new Request("http://127.0.0.1/v1/responses", { method: "POST", headers: auth, body: RESPONSES_STREAM_BODY.replace('"stream":true', '"stream":true,"store":false') }),
  "responses-raw": () => new Request("http://127.0.0.1/v1/responses", { method: "POST", headers: { ...auth, "x-upstream-mode": "raw" }, body: RESPONSES_STREAM_BODY }),
  "responses-collect": () => new Request("http://127.0.0.1/v1/responses", { method: "POST", headers: auth, body: RESPONSES_STREAM_BODY.replace('"stream":true', '"stream":false') }),
  "chat-stream": () => new Request("http://127.0.0.1/v1/chat/completions", { method: "POST", headers: auth, body: chatBody }),
  models: () => new Request("http://127.0.0.1/v1/models", { headers: { authorization: `Bearer ${apiKey}` } }),
};

/** The ledger's pending rows written (the baseline tree has a separate writer). */
const flushLedger = async () => (deps.ledgerWriter ? deps.ledgerWriter.flush() : await deps.ledger.flush());

async function one(make: () => Request): Promise<void> {
  const res: Response = await app.handle(make());
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
}

async function measure(name: string, make: () => Request): Promise<void> {
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: C }, async () => { while (next++ < n) await one(make); }));
  };
  await run(Math.min(3000, N));
  await flushLedger();
  Bun.gc(true);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run(N);
  await flushLedger();
  const c = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  process.stdout.write(`${(((c.user + c.system) / N)).toFixed(1).padStart(7)} µs CPU/req  ${((wall * 1000) / N).toFixed(1).padStart(7)} µs wall/req  ${name}\n`);
}

const only = values.only?.split(",");
process.stdout.write(`in-process, ${N} requests per case, ${C} at a time (${GANTRY_SOURCE})\n`);
for (const [name, make] of Object.entries(cases)) if (!only || only.includes(name)) await measure(name, make);
deps.close();
process.exit(0);
