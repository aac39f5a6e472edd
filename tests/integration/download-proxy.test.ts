/**
 * Proxy fallback of /dl/{token} against a local origin server that behaves like a code host: single ranges
 * only (multi-range is a 501, as GitHub's front does), redirects, failures.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const SIZE = 200_000;
const data = crypto.getRandomValues(new Uint8Array(SIZE));
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

interface Seen {
  method: string;
  path: string;
  range: string | null;
  authorization: string | null;
  cookie: string | null;
}
const seen: Seen[] = [];
let origin: Server<undefined>;
let originUrl: string;
/** A second loopback server, on 127.0.0.2: never allowed, so nothing may ever reach it. */
let internal: Server<undefined>;
let internalUrl: string;
const internalSeen: string[] = [];
let g: Gantry;

beforeAll(async () => {
  internal = Bun.serve({
    hostname: "127.0.0.2",
    port: 0,
    fetch(req) {
      internalSeen.push(new URL(req.url).pathname);
      return new Response("internal secret");
    },
  });
  internalUrl = `http://127.0.0.2:${internal.port}`;
  origin = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      seen.push({ method: req.method, path: url.pathname, range: req.headers.get("range"), authorization: req.headers.get("authorization"), cookie: req.headers.get("cookie") });
      switch (url.pathname) {
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: "/files/app.zip" } });
        case "/to-internal":
          return new Response(null, { status: 302, headers: { location: `${internalUrl}/secret` } });
        case "/loop":
          return new Response(null, { status: 302, headers: { location: "/loop" } });
        case "/missing":
          return new Response("nope", { status: 404 });
        case "/ignores-range":
          return new Response(data);
        case "/files/app.zip": {
          const range = req.headers.get("range");
          if (!range) return new Response(data, { headers: { "content-type": "application/zip" } });
          if (range.includes(",")) return new Response("multi-range not supported", { status: 501 });
          const m = /^bytes=(\d*)-(\d*)$/.exec(range)!;
          let start = Number(m[1]);
          let end = m[2] === "" ? SIZE - 1 : Math.min(Number(m[2]), SIZE - 1);
          if (m[1] === "") {
            start = SIZE - Number(m[2]);
            end = SIZE - 1;
          }
          if (start >= SIZE) return new Response(null, { status: 416, headers: { "content-range": `bytes */${SIZE}` } });
          return new Response(data.slice(start, end + 1), { status: 206, headers: { "content-range": `bytes ${start}-${end}/${SIZE}` } });
        }
      }
      return new Response("?", { status: 404 });
    },
  });
  originUrl = `http://127.0.0.1:${origin.port}`;
  // The origin is on loopback: fetched from only because the operator allows the host.
  g = await startGantry({ config: { allowedFetchHosts: ["127.0.0.1"] } });
  await g.deps.releases.catalog.create("1.0.0", {}, true);
});
afterAll(async () => {
  await g.stop();
  await origin.stop(true);
  await internal.stop(true);
});

async function assetFor(name: string, path: string): Promise<number> {
  const res = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name, url: `${originUrl}${path}` }) });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}
async function link(id: number): Promise<string> {
  const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}
const bytes = async (r: Response) => new Uint8Array(await r.arrayBuffer());

describe("proxy fallback", () => {
  let id: number;
  beforeAll(async () => {
    id = await assetFor("web-1.0.0.zip", "/redirect");
  });

  test("the latest document lists it as proxy with a download URL", async () => {
    const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
    expect(doc.assets.find((a: any) => a.id === id)).toMatchObject({ source: "proxy", downloadUrl: `${g.url}/api/v1/download/${id}`, sha256: "" });
  });

  test("unknown size: a single range is passed through; the full GET streams the bytes and records the size", async () => {
    seen.length = 0;
    const url = await link(id);
    const part = await fetch(url, { headers: { range: "bytes=10-19", cookie: "session=1" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-19/${SIZE}`);
    expect(await bytes(part)).toEqual(data.slice(10, 20));

    const full = await fetch(url, { headers: { authorization: "Bearer client-secret", cookie: "a=b" } });
    expect(full.status).toBe(200);
    expect(full.headers.get("content-type")).toBe("application/zip");
    expect(full.headers.get("content-disposition")).toContain('filename="web-1.0.0.zip"');
    expect(sha256(await bytes(full))).toBe(sha256(data));

    // Redirects were followed, the client's credentials never forwarded.
    expect(seen.filter((s) => s.path === "/redirect").length).toBe(2);
    expect(seen.filter((s) => s.path === "/files/app.zip").map((s) => s.range)).toEqual(["bytes=10-19", null]);
    expect(seen.every((s) => s.authorization === null && s.cookie === null)).toBe(true);
    // The link is not spent by a complete GET: it serves until its expiry (docs/contract.md, Downloads).
    const again = await fetch(url);
    expect(again.status).toBe(200);
    await again.arrayBuffer();

    // The complete pass was mirrored on the way (pull-through): size and SHA-256 known, served from here now.
    const { value: view } = await pollUntil(
      async () => (await (await g.admin("/admin/api/releases/1.0.0")).json()).assets.find((a: any) => a.id === id),
      (a: any) => a.source === "mirror",
      { what: "the asset mirrored" },
    );
    expect(view).toMatchObject({ size: SIZE, downloads: 1, source: "mirror", sha256: `sha256:${sha256(data)}` });
  });

  test("known size: HEAD and 416 answered locally; a multi-range request is one upstream range covering its span", async () => {
    const known = await assetFor("known.zip", "/redirect");
    const url = await link(known);
    seen.length = 0;
    // Unknown size: a HEAD asks the upstream with a HEAD, never a GET, and learns the size.
    const first = await fetch(url, { method: "HEAD" });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-length")).toBe(String(SIZE));
    expect(seen.filter((s) => s.path === "/files/app.zip").map((s) => s.method)).toEqual(["HEAD"]);
    seen.length = 0;
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(SIZE));
    const outside = await fetch(url, { headers: { range: `bytes=${SIZE}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get("content-range")).toBe(`bytes */${SIZE}`);
    expect(seen).toEqual([]);

    const res = await fetch(url, { headers: { range: "bytes=0-4,100-109,-3" } });
    expect(res.status).toBe(206);
    const type = res.headers.get("content-type")!;
    expect(type).toStartWith("multipart/byteranges; boundary=");
    const boundary = type.split("boundary=")[1];
    const text = Buffer.from(await bytes(res)).toString("latin1");
    const expected = (s: number, e: number) =>
      `\r\n--${boundary}\r\nContent-Type: application/zip\r\nContent-Range: bytes ${s}-${e}/${SIZE}\r\n\r\n` + Buffer.from(data.slice(s, e + 1)).toString("latin1");
    expect(text).toBe(expected(0, 4) + expected(100, 109) + expected(SIZE - 3, SIZE - 1) + `\r\n--${boundary}--\r\n`);
    // The origin never saw a multi-range request (it would answer 501), and was asked once.
    const ranges = seen.filter((s) => s.path === "/files/app.zip").map((s) => s.range);
    expect(ranges).toEqual([`bytes=0-${SIZE - 1}`]);
  });

  test("an origin that ignores Range is cut to the range here", async () => {
    const other = await assetFor("other.zip", "/ignores-range");
    const url = await link(other);
    // Unknown size: the origin answers the passed-on range with 200 and its length; the range is cut here.
    const first = await fetch(url, { headers: { range: "bytes=5-9" } });
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe(`bytes 5-9/${SIZE}`);
    expect(await bytes(first)).toEqual(data.slice(5, 10));
    const url2 = await link(other);
    const part = await fetch(url2, { headers: { range: "bytes=5-9" } });
    expect(part.status).toBe(206);
    expect(await bytes(part)).toEqual(data.slice(5, 10));
  });

  test("upstream failures are a 502 envelope that never echoes the address", async () => {
    for (const path of ["/missing", "/loop"]) {
      const bad = await assetFor(`bad${path.slice(1)}.zip`, path);
      const res = await fetch(await link(bad));
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(body.error.code).toBe("upstream_unavailable");
      expect(JSON.stringify(body)).not.toContain(originUrl);
    }
    const down = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "down.zip", url: "http://127.0.0.1:1/x" }) });
    const res = await fetch(await link((await down.json()).id));
    expect(res.status).toBe(502);
  });

  test("only http(s) upstream addresses are accepted", async () => {
    for (const url of ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "//example.com/x"]) {
      const res = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "x.zip", url }) });
      expect(res.status).toBe(400);
    }
  });
});

describe("the proxy fetches from public addresses only, unless the operator allows the host", () => {
  let strict: Gantry;
  beforeAll(async () => {
    strict = await startGantry({ captureLogs: true });
    await strict.deps.releases.catalog.create("2.0.0", {}, true);
  });
  afterAll(() => strict.stop());

  const failureOf = async (on: Gantry, version: string, name: string, url: string) => {
    const created = await on.admin(`/admin/api/releases/${version}/assets`, { method: "POST", body: JSON.stringify({ name, url }) });
    expect(created.status).toBe(201);
    const id = (await created.json()).id;
    const linked = await fetch(`${on.url}/api/v1/download/${id}`, { redirect: "manual" });
    const res = await fetch(linked.headers.get("location")!);
    return { status: res.status, error: (await res.json()).error };
  };

  test("loopback, private, link-local and metadata addresses are refused before any request, in IPv4 and IPv6 forms", async () => {
    const before = seen.length;
    const targets = [
      `${originUrl}/files/app.zip`,
      `http://localhost:${origin.port}/files/app.zip`,
      `http://[::ffff:127.0.0.1]:${origin.port}/files/app.zip`,
      `http://[::1]:${origin.port}/files/app.zip`,
      "http://10.1.2.3/x",
      "http://172.16.0.1/x",
      "http://192.168.1.1/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://0.0.0.0/x",
      "http://[fd00::1]/x",
      "http://[fe80::1]/x",
      "http://no-such-host.invalid/x",
    ];
    const failures = [];
    for (const [i, url] of targets.entries()) failures.push({ url, ...(await failureOf(strict, "2.0.0", `refused-${i}.zip`, url)) });
    for (const f of failures) {
      expect({ url: f.url, status: f.status, code: f.error.code }).toEqual({ url: f.url, status: 502, code: "upstream_unavailable" });
      // One text for refused and unreachable (an unknown name is the last one): no address, no reason.
      expect(f.error.message).toBe(failures.at(-1)!.error.message);
    }
    expect(failures[0].error.message).not.toContain("127.0.0.1");
    expect(seen.length).toBe(before);
    expect(strict.logs.filter((l) => l.includes("fetch refused")).length).toBeGreaterThanOrEqual(targets.length - 1);
  });

  test("a redirect from an allowed host to an internal address is refused at that hop", async () => {
    const failure = await failureOf(g, "1.0.0", "to-internal.zip", `${originUrl}/to-internal`);
    expect(failure.status).toBe(502);
    expect(seen.some((s) => s.path === "/to-internal")).toBe(true);
    expect(internalSeen).toEqual([]);
    // Listing the host lets it through: the check is the guard, not the network.
    const open = await startGantry({ config: { allowedFetchHosts: ["127.0.0.1", "127.0.0.2"] } });
    try {
      await open.deps.releases.catalog.create("1.0.0", {}, true);
      const created = await open.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "through.zip", url: `${originUrl}/to-internal` }) });
      const linked = await fetch(`${open.url}/api/v1/download/${(await created.json()).id}`, { redirect: "manual" });
      const res = await fetch(linked.headers.get("location")!);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("internal secret");
      expect(internalSeen).toEqual(["/secret"]);
    } finally {
      await open.stop();
    }
  });
});

describe("a proxied asset's counts and links", () => {
  test("a 100-byte probe counts nothing; a link made before the digest was learnt still serves after pull-through", async () => {
    // Clients told apart by X-Forwarded-For from a trusted proxy: each has its own links and its own count.
    const h = await startGantry({ config: { allowedFetchHosts: ["127.0.0.1"], trustedProxies: ["127.0.0.1"] } });
    try {
      await h.deps.releases.catalog.create("2.0.0", {}, true);
      const created = await h.admin("/admin/api/releases/2.0.0/assets", { method: "POST", body: JSON.stringify({ name: "probe.zip", url: `${originUrl}/files/app.zip` }) });
      expect(created.status).toBe(201);
      const id = (await created.json()).id;
      const linkFor = async (client: string) => {
        const res = await fetch(`${h.url}/api/v1/download/${id}`, { redirect: "manual", headers: { "x-forwarded-for": client } });
        expect(res.status).toBe(302);
        return res.headers.get("location")!;
      };
      const prober = "198.51.100.1";
      const downloader = "198.51.100.2";
      const probeUrl = await linkFor(prober);
      const probe = await fetch(probeUrl, { headers: { range: "bytes=0-99", "x-forwarded-for": prober } });
      expect(probe.status).toBe(206);
      expect(await bytes(probe)).toEqual(data.slice(0, 100));

      const url = await linkFor(downloader);
      const full = await fetch(url, { headers: { "x-forwarded-for": downloader } });
      expect(full.status).toBe(200);
      expect(sha256(await bytes(full))).toBe(sha256(data));
      const { value: view } = await pollUntil(
        async () => (await (await h.admin("/admin/api/releases/2.0.0")).json()).assets.find((a: any) => a.id === id),
        (a: any) => a.source === "mirror" && a.downloads >= 1,
        { what: "the complete pass counted and mirrored" },
      );
      // Had the probe counted (it was made first), there would be two.
      expect(view.downloads).toBe(1);

      // Both links were made while the digest was unknown: they still serve now that it is known (a resume).
      const resumed = await fetch(url, { headers: { range: "bytes=100-199", "x-forwarded-for": downloader } });
      expect(resumed.status).toBe(206);
      expect(await bytes(resumed)).toEqual(data.slice(100, 200));
      const again = await fetch(probeUrl, { headers: { range: "bytes=100-199", "x-forwarded-for": prober } });
      expect(again.status).toBe(206);
      await again.arrayBuffer();
    } finally {
      await h.stop();
    }
  });
});
