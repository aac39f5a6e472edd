/**
 * Proxied assets against upstreams that count what they serve: some honour Range, some ignore it (with and
 * without a Content-Length), one lies about the range it sent, one redirects without a Location. A request
 * never makes more than one upstream request nor reads more than the file, a HEAD never starts a GET, a range
 * is checked against what came back, a 502 names no address, and the first complete pass is mirrored.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const SIZE = 8 * 1024 * 1024;
const CHUNK = 64 * 1024;
const data = crypto.getRandomValues(new Uint8Array(SIZE));
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** Per path: requests (method and Range) and the bytes the upstream handed to its socket. */
const log = new Map<string, { requests: Array<{ method: string; range: string | null }>; bytes: number }>();
const entry = (path: string) => {
  let e = log.get(path);
  if (!e) log.set(path, (e = { requests: [], bytes: 0 }));
  return e;
};

/** The bytes [start, end] as a pull-driven stream, counting what is actually pulled from it. */
function counted(path: string, start: number, end: number): ReadableStream<Uint8Array> {
  let at = start;
  return new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (at > end) return c.close();
        const chunk = data.slice(at, Math.min(end + 1, at + CHUNK));
        at += chunk.byteLength;
        entry(path).bytes += chunk.byteLength;
        c.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
}

let origin: Server<undefined>;
let base: string;
let g: Gantry;

beforeAll(async () => {
  origin = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const range = req.headers.get("range");
      entry(path).requests.push({ method: req.method, range });
      const kind = path.split("/")[1];
      // Bun sends a streamed body chunked and drops its Content-Length (oven-sh/bun#10507): a stream is counted as
      // it is pulled but carries no length; a whole buffer carries its length and is counted whole.
      const whole = (length = true) =>
        new Response(req.method === "HEAD" ? null : counted(path, 0, SIZE - 1), { headers: length ? { "content-length": String(SIZE) } : {} });
      switch (kind) {
        case "ignores": {
          if (req.method !== "HEAD") entry(path).bytes += SIZE;
          return new Response(req.method === "HEAD" ? null : data, { headers: { "content-length": String(SIZE) } });
        }
        case "ignores-stream":
          return whole();
        case "ignores-unsized":
          return whole(false);
        case "get-only":
          if (req.method === "HEAD") return new Response(null, { status: 403 });
          return whole();
        case "no-location":
          return new Response(null, { status: 302 });
        case "liar":
          return new Response(counted(path, 0, 99), { status: 206, headers: { "content-range": `bytes 0-99/${SIZE}` } });
        case "honours": {
          if (!range) return whole();
          const m = /^bytes=(\d*)-(\d*)$/.exec(range);
          if (!m) return new Response("multi-range not supported", { status: 501 });
          const suffix = m[1] === "";
          const start = suffix ? Math.max(0, SIZE - Number(m[2])) : Number(m[1]);
          const end = suffix || m[2] === "" ? SIZE - 1 : Math.min(Number(m[2]), SIZE - 1);
          if (start >= SIZE) return new Response(null, { status: 416, headers: { "content-range": `bytes */${SIZE}` } });
          return new Response(req.method === "HEAD" ? null : counted(path, start, end), {
            status: 206,
            headers: { "content-range": `bytes ${start}-${end}/${SIZE}`, "content-length": String(end - start + 1) },
          });
        }
      }
      return new Response("?", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${origin.port}`;
  // The upstream is on loopback: fetched from only because the operator allows the host.
  g = await startGantry({ config: { allowedFetchHosts: ["127.0.0.1"] } });
  await g.deps.releases.catalog.create("1.0.0", {}, true);
});
afterAll(async () => {
  await g.stop();
  await origin.stop(true);
});

async function asset(name: string, path: string): Promise<number> {
  const res = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name, url: `${base}${path}` }) });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}
async function link(id: number): Promise<string> {
  const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}
const assetView = async (id: number) => (await (await g.admin("/admin/api/releases/1.0.0")).json()).assets.find((a: any) => a.id === id);

/** curl, as a download manager drives it: the body to a file, the status and headers on stdout. */
async function curl(args: string[]): Promise<{ code: number; out: string; body: Uint8Array }> {
  const file = `${process.env.TMPDIR ?? "/tmp"}/gantry-proxy-${crypto.randomUUID()}`;
  const proc = Bun.spawn(["/usr/bin/curl", "-sS", "-D", "-", "-o", file, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  const f = Bun.file(file);
  const body = (await f.exists()) ? new Uint8Array(await f.arrayBuffer()) : new Uint8Array();
  await f.delete().catch(() => {});
  return { code, out, body };
}

describe("proxied assets", () => {
  test("40 one-byte ranges from an upstream that ignores Range: one upstream request, at most the file read", async () => {
    const id = await asset("ignores.bin", "/ignores-stream/a");
    const url = await link(id);
    // The size is learnt by a HEAD (an upstream HEAD, no GET).
    expect((await fetch(url, { method: "HEAD" })).headers.get("content-length")).toBe(String(SIZE));
    expect(entry("/ignores-stream/a").requests.map((r) => r.method)).toEqual(["HEAD"]);
    const offsets = Array.from({ length: 40 }, (_, i) => Math.floor(((i + 1) * SIZE) / 41));
    const r = await curl(["-r", offsets.map((o) => `${o}-${o}`).join(","), url]);
    expect(r.code).toBe(0);
    expect(r.out).toStartWith("HTTP/1.1 206");
    const text = Buffer.from(r.body).toString("latin1");
    for (const o of offsets) expect(text).toContain(`Content-Range: bytes ${o}-${o}/${SIZE}\r\n\r\n${String.fromCharCode(data[o])}`);
    const seen = entry("/ignores-stream/a");
    expect(seen.requests.filter((q) => q.method === "GET")).toHaveLength(1);
    expect(seen.bytes).toBeLessThanOrEqual(SIZE);
  });

  test("a multi-range request to an upstream that honours Range is one request for the span", async () => {
    const id = await asset("honours.bin", "/honours/a");
    const url = await link(id);
    await fetch(url, { method: "HEAD" });
    const r = await curl(["-r", "1000-1009,5000-5009,2000000-2000009", url]);
    expect(r.out).toStartWith("HTTP/1.1 206");
    const gets = entry("/honours/a").requests.filter((q) => q.method === "GET");
    expect(gets.map((q) => q.range)).toEqual(["bytes=1000-2000009"]);
    expect(entry("/honours/a").bytes).toBeLessThan(2_000_010 + 4 * CHUNK);
  });

  test("a HEAD of an asset of unknown size sends the upstream a HEAD, not a GET", async () => {
    const id = await asset("head.bin", "/honours/head");
    const res = await fetch(await link(id), { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(entry("/honours/head").requests.map((r) => r.method)).toEqual(["HEAD"]);
    expect(entry("/honours/head").bytes).toBe(0);
    // A storage URL signed for GET refuses HEAD: answered from what is known (no length), still no GET.
    const refused = await fetch(await link(await asset("get-only.bin", "/get-only/x")), { method: "HEAD" });
    expect(refused.status).toBe(200);
    expect(refused.headers.get("content-length")).toBeNull();
    expect(refused.headers.get("content-disposition")).toContain("get-only.bin");
    // curl sees the same on the wire, and does not wait for a body.
    const viaCurl = await curl(["-I", await link(await asset("get-only-2.bin", "/get-only/y"))]);
    expect(viaCurl.code).toBe(0);
    expect(viaCurl.out).toStartWith("HTTP/1.1 200");
    expect(viaCurl.out.toLowerCase()).not.toContain("content-length");
    expect(entry("/get-only/x").requests.map((r) => r.method)).toEqual(["HEAD"]);
    expect(entry("/get-only/y").requests.map((r) => r.method)).toEqual(["HEAD"]);
  });

  test("a single range of unknown size is checked against the upstream's answer", async () => {
    // Ignored, with a length: skipped to the offset here, 206, and read no further than the range.
    const ignored = await fetch(await link(await asset("ign1.bin", "/ignores/single")), { headers: { range: "bytes=100-199" } });
    expect(ignored.status).toBe(206);
    expect(ignored.headers.get("content-range")).toBe(`bytes 100-199/${SIZE}`);
    expect(new Uint8Array(await ignored.arrayBuffer())).toEqual(data.slice(100, 200));
    expect(entry("/ignores/single").requests).toHaveLength(1);
    // Size known (learnt by a HEAD), upstream ignoring Range: read no further than the range's end.
    const knownUrl = await link(await asset("ign3.bin", "/ignores-stream/single"));
    await fetch(knownUrl, { method: "HEAD" });
    const known = await fetch(knownUrl, { headers: { range: "bytes=100-199" } });
    expect(known.status).toBe(206);
    expect(new Uint8Array(await known.arrayBuffer())).toEqual(data.slice(100, 200));
    // The upstream transfer is aborted at the range's end; only what was already in flight (socket buffers, Bun's
    // fetch reading ahead on loopback) passes it.
    expect(entry("/ignores-stream/single").requests.filter((q) => q.method === "GET")).toHaveLength(1);
    expect(entry("/ignores-stream/single").bytes).toBeLessThan(SIZE);
    // Ignored, no length: the whole file, 200 (the Range ignored, as RFC 9110 allows).
    const unsized = await fetch(await link(await asset("ign2.bin", "/ignores-unsized/x")), { headers: { range: "bytes=100-199" } });
    expect(unsized.status).toBe(200);
    expect(sha256(new Uint8Array(await unsized.arrayBuffer()))).toBe(sha256(data));
    // Answered with another range than asked: a 502, not wrong bytes.
    const lied = await fetch(await link(await asset("liar.bin", "/liar/x")), { headers: { range: "bytes=5000-5099" } });
    expect(lied.status).toBe(502);
    expect((await lied.json()).error.code).toBe("upstream_unavailable");
    // Honoured: passed through, and the size learnt from its Content-Range.
    const honouredId = await asset("hon.bin", "/honours/single");
    const honoured = await fetch(await link(honouredId), { headers: { range: "bytes=-10" } });
    expect(honoured.status).toBe(206);
    expect(honoured.headers.get("content-range")).toBe(`bytes ${SIZE - 10}-${SIZE - 1}/${SIZE}`);
    expect(new Uint8Array(await honoured.arrayBuffer())).toEqual(data.slice(SIZE - 10));
    await pollUntil(() => assetView(honouredId), (a: any) => a.size === SIZE, { what: "the size learnt" });
  });

  test("a 502 never names the upstream's address, in its body or its headers", async () => {
    const host = `127.0.0.1:${origin.port}`;
    for (const path of ["/no-location/x", "/liar/y", "/nothing-here", "/ignores-unsized/../no-location/z"]) {
      const res = await fetch(await link(await asset(`bad-${crypto.randomUUID()}.bin`, path)), path.startsWith("/liar") ? { headers: { range: "bytes=7-8" } } : {});
      expect(res.status).toBe(502);
      const text = await res.text();
      const headers = JSON.stringify([...res.headers]);
      for (const leak of [host, String(origin.port), "127.0.0.1"]) {
        expect(text).not.toContain(leak);
        expect(headers).not.toContain(leak);
      }
      expect(JSON.parse(text).error.code).toBe("upstream_unavailable");
    }
  });

  test("pull-through: the first complete pass is mirrored (SHA-256 and size learnt); the upstream is not asked again", async () => {
    const id = await asset("pulled.bin", "/ignores-unsized/pulled");
    expect((await (await fetch(`${g.url}/api/v1/latest`)).json()).assets.find((a: any) => a.id === id).sha256).toBe("");
    // A pass the caller breaks off is not stored.
    const broken = await fetch(await link(id));
    const reader = broken.body!.getReader();
    await reader.read();
    await reader.cancel();
    const full = await curl([await link(id)]);
    expect(full.code).toBe(0);
    expect(sha256(full.body)).toBe(sha256(data));
    const { value } = await pollUntil(() => assetView(id), (a: any) => a.source === "mirror", { what: "the asset mirrored" });
    expect(value).toMatchObject({ sha256: `sha256:${sha256(data)}`, size: SIZE });
    const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
    expect(doc.assets.find((a: any) => a.id === id)).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(data)}`, size: SIZE });
    const before = entry("/ignores-unsized/pulled").requests.length;
    const again = await curl(["-r", "10-19", await link(id)]);
    expect(again.out).toStartWith("HTTP/1.1 206");
    expect(again.body).toEqual(data.slice(10, 20));
    expect(entry("/ignores-unsized/pulled").requests.length).toBe(before);
  });
});
