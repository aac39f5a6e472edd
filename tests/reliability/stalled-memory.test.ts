/**
 * A caller that stops reading costs the server what one batch in flight costs, not its reply: 20 streams nobody
 * reads, against an upstream that never ends, grow the heap (after a full collection) by less than STREAM_BUDGET each.
 * The upstream is read only as fast as the caller takes bytes (the kernel's socket buffers on both sides, a few
 * MiB, are not the process's memory). Before, every skipped event of a reply, its text as a rope of one node per
 * delta and its chat text likewise were kept until the reply ended: 11-13 MiB a stalled stream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { connect, type Socket } from "node:net";
import { startEndlessUpstream, type EndlessUpstream } from "../support/endless-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const STREAMS = 20;
/**
 * Measured after the fix: 1.5-2.2 MiB a stream, most of it Bun's own: the bytes its fetch read ahead of the reader
 * (about 0.6 MiB) and the chunk being read (up to 0.5 MiB). Before the fix: 11-13 MiB.
 */
const STREAM_BUDGET = 3 * 1024 * 1024;

let upstream: EndlessUpstream;
let g: Gantry;
let key: string;
let port: number;

beforeAll(async () => {
  upstream = await startEndlessUpstream();
  // No stall cut while the test measures (it would free what is measured).
  g = await startGantry({ config: { upstreamUrl: upstream.url, writeStallSeconds: 3600 } });
  key = await g.createKey();
  port = Number(new URL(g.url).port);
});
afterAll(async () => {
  await g?.stop();
  await upstream?.close();
});

/** Sends a request and never reads the reply. */
function neverRead(path: string, body: object): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const json = JSON.stringify(body);
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
      socket.pause();
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

function heapBytes(): number {
  Bun.gc(true);
  const h = heapStats();
  return h.heapSize + h.extraMemorySize;
}

test.each([
  ["responses, kept", "/v1/responses", { input: "x" }],
  ["responses, store:false", "/v1/responses", { input: "x", store: false }],
  ["chat", "/v1/chat/completions", { messages: [{ role: "user", content: "x" }] }],
] as const)("%s: a stream nobody reads holds less than its budget", async (name, path, extra) => {
  const before = heapBytes();
  const generatedBefore = (await upstream.stats()).generated;
  const sockets: Socket[] = [];
  for (let i = 0; i < STREAMS; i++) sockets.push(await neverRead(path, { model: "m", stream: true, ...extra }));
  // Every stream is stalled once the upstream has been asked for nothing more for a while (each step is a request).
  let last = -1;
  let still = 0;
  await pollUntil(
    async () => {
      const { generated } = await upstream.stats();
      still = generated === last ? still + 1 : 0;
      last = generated;
      return still;
    },
    (n) => n >= 10,
    { what: "the upstream to be read no further", timeoutMs: 60_000, stepMs: 100 },
  );
  const perStream = (heapBytes() - before) / STREAMS;
  const readPerStream = (last - generatedBefore) / STREAMS;
  console.log(`[stalled-memory] ${name}: upstream sent ${(readPerStream / 2 ** 20).toFixed(1)} MiB a stream; heap +${(perStream / 2 ** 20).toFixed(2)} MiB a stream`);
  for (const s of sockets) s.destroy();
  await pollUntil(async () => (await upstream.stats()).open, (n) => n === 0, { what: "every upstream reply to be cancelled", timeoutMs: 20_000, stepMs: 50 });
  expect(perStream).toBeLessThan(STREAM_BUDGET);
}, 120_000);
