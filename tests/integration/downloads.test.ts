/**
 * The whole download path over HTTP: 302 to a signed, client-bound /dl/ link, bytes and SHA-256, HEAD, single and
 * multipart ranges, 416, If-Range, reuse refused, expiry (injected clock), counting, hostile input.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { TEST_BACKEND, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const SIZE = 300_000;
const data = crypto.getRandomValues(new Uint8Array(SIZE));
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

let clock = Date.parse("2026-03-01T00:00:00Z");
let g: Gantry;
let assetId: number;

beforeAll(async () => {
  // 127.0.0.1 is a trusted proxy here, so a test can speak as other clients with X-Forwarded-For.
  g = await startGantry({ now: () => clock, config: { downloadTokenTtlSeconds: 600, trustedProxies: ["127.0.0.1"] } });
  await g.deps.releases.catalog.create("1.0.0", {}, true);
  assetId = (await g.deps.releases.catalog.upload("1.0.0", "Gantry-1.0.0-x64-setup.exe", new Blob([data]).stream(), SIZE)).id;
});
afterAll(() => g.stop());

/** A fresh /dl/ URL for the asset (for the client at `client`, as a trusted proxy would say). */
async function link(id = assetId, client?: string): Promise<string> {
  const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual", headers: client ? { "x-forwarded-for": client } : {} });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}

async function bytes(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

async function downloads(): Promise<number> {
  const r = await (await g.admin("/admin/api/releases/1.0.0")).json();
  return r.assets.find((a: any) => a.id === assetId).downloads;
}

/** Splits a multipart/byteranges body into its parts (headers + bytes). */
function parseMultipart(body: Uint8Array, contentType: string): Array<{ headers: Record<string, string>; bytes: Uint8Array }> {
  const boundary = /boundary=([^;]+)/.exec(contentType)![1];
  const text = Buffer.from(body).toString("latin1");
  const parts = text.split(`--${boundary}`).slice(1, -1);
  expect(text.endsWith(`--${boundary}--\r\n`)).toBe(true);
  return parts.map((p) => {
    const [head, ...rest] = p.replace(/^\r\n/, "").split("\r\n\r\n");
    const raw = rest.join("\r\n\r\n").replace(/\r\n$/, "");
    const headers = Object.fromEntries(head.split("\r\n").map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    return { headers, bytes: new Uint8Array(Buffer.from(raw, "latin1")) };
  });
}

describe("GET /api/v1/download/{id}", () => {
  test("302 to a fresh /dl/{token} every time, never cached", async () => {
    const res = await fetch(`${g.url}/api/v1/download/${assetId}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const a = res.headers.get("location")!;
    expect(a).toMatch(new RegExp(`^${g.url}/dl/[A-Za-z0-9_-]{108}$`));
    expect(await link()).not.toBe(a);
  });

  test("following the redirect yields the exact bytes, with download headers", async () => {
    const before = await downloads();
    const res = await fetch(`${g.url}/api/v1/download/${assetId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(res.headers.get("content-type")).toBe("application/vnd.microsoft.portable-executable");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="Gantry-1.0.0-x64-setup.exe"; filename*=UTF-8''Gantry-1.0.0-x64-setup.exe`);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    if (TEST_BACKEND === "shared") {
      // A plain GET is sent on to a presigned URL of the bucket, which answers with its own ETag (see docs/downloads.md).
      expect(res.redirected).toBe(true);
      expect(new URL(res.url).searchParams.get("X-Amz-Expires")).toBe("300");
    } else {
      expect(res.headers.get("etag")).toBe(`"sha256-${sha256(data)}"`);
    }
    const body = await bytes(res);
    expect(sha256(body)).toBe(sha256(data));
    const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
    expect(doc.assets[0].sha256).toBe(`sha256:${sha256(body)}`);
    expect(await downloads()).toBe(before + 1);
  });
});

describe("GET /dl/{token}", () => {
  test("HEAD, ranges and whole GETs any number of times within the lifetime; counted once, when the end is served", async () => {
    clock += 600_000; // a new counting window for this client
    const url = await link();
    const before = await downloads();

    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(SIZE));
    expect(head.headers.get("accept-ranges")).toBe("bytes");
    expect(await head.text()).toBe("");

    const one = await fetch(url, { headers: { range: "bytes=100-199" } });
    expect(one.status).toBe(206);
    expect(one.headers.get("content-range")).toBe(`bytes 100-199/${SIZE}`);
    expect(one.headers.get("content-length")).toBe("100");
    expect(await bytes(one)).toEqual(data.slice(100, 200));
    // A HEAD and a 100-byte probe are not downloads.
    expect(await downloads()).toBe(before);

    const suffix = await fetch(url, { headers: { range: "bytes=-10" } });
    expect(suffix.headers.get("content-range")).toBe(`bytes ${SIZE - 10}-${SIZE - 1}/${SIZE}`);
    expect(await bytes(suffix)).toEqual(data.slice(SIZE - 10));
    await pollUntil(downloads, (n) => n === before + 1, { what: "the download reaching the end counted" });

    const open = await fetch(url, { headers: { range: `bytes=${SIZE - 5}-` } });
    expect(await bytes(open)).toEqual(data.slice(SIZE - 5));

    for (let i = 0; i < 2; i++) {
      const full = await fetch(url);
      expect(full.status).toBe(200);
      expect(sha256(await bytes(full))).toBe(sha256(data));
    }
    // The same client, the same file, within the link's lifetime: one download, whatever links it minted.
    const second = await fetch(await link());
    expect(sha256(await bytes(second))).toBe(sha256(data));
    expect(await downloads()).toBe(before + 1);
    // Another client counts on its own.
    const theirs = await fetch(await link(assetId, "198.51.100.20"), { headers: { "x-forwarded-for": "198.51.100.20" } });
    expect(sha256(await bytes(theirs))).toBe(sha256(data));
    await pollUntil(downloads, (n) => n === before + 2, { what: "another client's download counted" });
  });

  test("a link is not a public link: another client address gets 410 (an IPv6 client is its /64)", async () => {
    const url = await link(assetId, "198.51.100.7");
    const as = (client: string, init: RequestInit = {}) => fetch(url, { ...init, headers: { ...(init.headers as object), "x-forwarded-for": client } });
    const mine = await as("198.51.100.7", { headers: { range: "bytes=0-9" } });
    expect(mine.status).toBe(206);
    await mine.arrayBuffer();
    for (const init of [{}, { method: "HEAD" }, { headers: { range: "bytes=0-1" } }]) {
      const res = await as("198.51.100.8", init);
      expect(res.status).toBe(410);
      if (!("method" in init)) expect((await res.json()).error.message).toContain("another client");
    }
    const v6 = await link(assetId, "2001:db8:5:6::1");
    const same64 = await fetch(v6, { headers: { "x-forwarded-for": "2001:db8:5:6:ffff::2", range: "bytes=0-0" } });
    expect(same64.status).toBe(206);
    await same64.arrayBuffer();
    expect((await fetch(v6, { method: "HEAD", headers: { "x-forwarded-for": "2001:db8:5:7::1" } })).status).toBe(410);
  });

  test("several ranges: multipart/byteranges with the right parts", async () => {
    const url = await link();
    const range = "bytes=0-9, 1000-1099,299990-";
    const head = await fetch(url, { method: "HEAD", headers: { range } });
    expect(head.status).toBe(206);
    const res = await fetch(url, { headers: { range } });
    expect(res.status).toBe(206);
    const type = res.headers.get("content-type")!;
    expect(type).toMatch(/^multipart\/byteranges; boundary=\S+$/);
    const body = await bytes(res);
    // HEAD announces the exact length of the multipart body (its boundary differs, not its length).
    expect(Number(head.headers.get("content-length"))).toBe(body.length);
    const parts = parseMultipart(body, type);
    expect(parts.map((p) => p.headers["content-range"])).toEqual([`bytes 0-9/${SIZE}`, `bytes 1000-1099/${SIZE}`, `bytes 299990-299999/${SIZE}`]);
    expect(parts.every((p) => p.headers["content-type"] === "application/vnd.microsoft.portable-executable")).toBe(true);
    expect(parts[0].bytes).toEqual(data.slice(0, 10));
    expect(parts[1].bytes).toEqual(data.slice(1000, 1100));
    expect(parts[2].bytes).toEqual(data.slice(299990));
    // Overlapping ranges are merged, so a request cannot multiply the response.
    const merged = await fetch(url, { headers: { range: "bytes=0-,0-,0-" } });
    expect(merged.headers.get("content-range")).toBe(`bytes 0-${SIZE - 1}/${SIZE}`);
    expect((await bytes(merged)).length).toBe(SIZE);
  });

  test("416 for a range outside the file; malformed Range headers are ignored (RFC 9110)", async () => {
    const url = await link();
    const res = await fetch(url, { headers: { range: `bytes=${SIZE}-` } });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe(`bytes */${SIZE}`);
    expect((await res.json()).error.code).toBe("range_not_satisfiable");
    const head = await fetch(url, { method: "HEAD", headers: { range: "bytes=999999999-" } });
    expect(head.status).toBe(416);
    const huge = await fetch(url, { headers: { range: "bytes=99999999999999999999999-" } });
    expect(huge.status).toBe(416);
    // A malformed Range is ignored: the whole file.
    const junk = await fetch(url, { headers: { range: "bytes=abc" } });
    expect(junk.status).toBe(200);
    expect((await bytes(junk)).length).toBe(SIZE);
  });

  test("If-Range: our ETag keeps the range, anything else gets the whole file", async () => {
    const url = await link();
    const etag = `"sha256-${sha256(data)}"`;
    const match = await fetch(url, { headers: { range: "bytes=0-3", "if-range": etag } });
    expect(match.status).toBe(206);
    await match.arrayBuffer();
    const stale = await fetch(url, { headers: { range: "bytes=0-3", "if-range": '"sha256-old"' } });
    expect(stale.status).toBe(200);
    expect((await bytes(stale)).length).toBe(SIZE);
  });

  test("expiry: after the TTL the link is 410, HEAD included", async () => {
    const url = await link();
    clock += 599_000;
    expect((await fetch(url, { method: "HEAD" })).status).toBe(200);
    clock += 1_000;
    const res = await fetch(url, { headers: { range: "bytes=0-0" } });
    expect(res.status).toBe(410);
    expect((await res.json()).error.message).toContain("expired");
    expect((await fetch(url, { method: "HEAD" })).status).toBe(410);
    // The stable URL always mints a fresh one.
    expect((await fetch(await link())).status).toBe(200);
  });

  test("new bytes behind the asset make older links gone", async () => {
    const url = await link();
    const other = crypto.getRandomValues(new Uint8Array(1000));
    const up = await g.admin("/admin/api/releases/1.0.0/assets/Gantry-1.0.0-x64-setup.exe", { method: "PUT", body: other });
    expect(up.status).toBe(201);
    const res = await fetch(url);
    expect(res.status).toBe(410);
    expect((await res.json()).error.message).toContain("changed");
    const fresh = await fetch(await link());
    expect(await bytes(fresh)).toEqual(other);
    // Put the original back for the other tests.
    await g.admin("/admin/api/releases/1.0.0/assets/Gantry-1.0.0-x64-setup.exe", { method: "PUT", body: data });
  });

  test("a deleted asset's links are unknown; only GET and HEAD are allowed", async () => {
    await g.deps.releases.catalog.create("0.9.0", {}, true);
    const tmp = await g.deps.releases.catalog.upload("0.9.0", "web-0.9.0.zip", new Blob(["zip"]).stream(), 3);
    const url = await link(tmp.id);
    expect((await fetch(url, { method: "POST" })).status).toBe(405);
    expect((await g.admin(`/admin/api/releases/0.9.0/assets/${tmp.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(url)).status).toBe(404);
    expect((await fetch(`${g.url}/api/v1/download/${tmp.id}`, { redirect: "manual" })).status).toBe(404);
  });
});

describe("hostile input", () => {
  test("asset ids: malformed 400, unknown 404, all with the error envelope", async () => {
    for (const id of ["-1", "0", "1e3", "0x10", "abc", "1.5", "99999999999999999999", "9007199254740993", "%20"]) {
      const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: "invalid_request", param: "assetId" });
    }
    const unknown = await fetch(`${g.url}/api/v1/download/987654`, { redirect: "manual" });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe("not_found");
    const unavailable = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "none.dmg", url: "" }) });
    const none = await fetch(`${g.url}/api/v1/download/${(await unavailable.json()).id}`, { redirect: "manual" });
    expect(none.status).toBe(404);
  });

  test("tokens: traversal attempts and unknown tokens are 404, never a file", async () => {
    const attempts = [
      "..%2F..%2F..%2Fetc%2Fpasswd",
      "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "....%2F%2F....%2F%2Fetc%2Fpasswd",
      "%00",
      "a".repeat(43),
      `${"a".repeat(40)}%2F..`,
      "A".repeat(5000),
      sha256(data),
      `${sha256(data).slice(0, 2)}%2F${sha256(data)}`,
    ];
    for (const t of attempts) {
      const res = await fetch(`${g.url}/dl/${t}`);
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(text).toContain('"error"');
      expect(text).not.toContain("root:");
    }
    for (const path of ["/dl/../../etc/passwd", "/dl/..%5C..%5Cwindows", "/dl/", "/dl"]) {
      const res = await fetch(`${g.url}${path}`);
      expect(res.status).toBe(404);
    }
  });

  test("hostile file names are sanitised before they are stored or sent", async () => {
    const evil = await g.admin(`/admin/api/releases/1.0.0/assets/${encodeURIComponent('..\\..\\x"y\r\nz.exe')}`, { method: "PUT", body: "evil" });
    expect(evil.status).toBe(201);
    const asset = await evil.json();
    expect(asset.name).toBe('x"yz.exe');
    const res = await fetch(`${g.url}/api/v1/download/${asset.id}`);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="x_yz.exe"; filename*=UTF-8''x%22yz.exe`);
    expect(await res.text()).toBe("evil");
    // Only digest-named files exist in the mirror.
    const root = join(g.deps.config.dataDir, "mirror");
    for (const dir of readdirSync(root)) {
      if (dir === ".tmp") continue;
      expect(dir).toMatch(/^[0-9a-f]{2}$/);
      for (const f of readdirSync(join(root, dir))) expect(f).toMatch(/^[0-9a-f]{64}$/);
    }
    const nothing = await g.admin(`/admin/api/releases/1.0.0/assets/${encodeURIComponent("../")}`, { method: "PUT", body: "x" });
    expect(nothing.status).toBe(400);
  });
});
