/**
 * /dl/{token} with the asset bytes in S3 (radosgw), in both modes of GANTRY_S3_REDIRECT_DOWNLOADS:
 * - on (the default): a plain full GET consumes the token, counts, and answers 302 to a presigned bucket URL
 *   that serves the bytes with Gantry's Content-Type and Content-Disposition; HEAD, Range and If-Range stay
 *   with Gantry (its SHA-256 ETag, its rules), streamed from the bucket;
 * - off: everything is streamed from the bucket through Gantry, with Gantry's headers.
 * Also: publishing a file larger than one multipart part puts exactly its bytes in the bucket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";
import { s3Server, s3Unavailable } from "../support/s3";

const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const unavailable = s3Unavailable();

async function gantryOnS3(redirect: boolean): Promise<Gantry> {
  const s3 = await s3Server();
  return startGantry({
    config: {
      s3Bucket: await s3.createBucket(),
      s3Endpoint: s3.endpoint,
      s3Region: s3.region,
      s3AccessKeyId: s3.accessKeyId,
      s3SecretAccessKey: s3.secretAccessKey,
      s3RedirectDownloads: redirect,
    },
  });
}

async function publish(g: Gantry, version: string, name: string, data: Uint8Array<ArrayBuffer>): Promise<number> {
  await g.deps.releases.catalog.create(version, {}, true);
  return (await g.deps.releases.catalog.upload(version, name, new Blob([data]).stream(), data.length)).id;
}

async function link(g: Gantry, id: number): Promise<string> {
  const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}

async function downloads(g: Gantry, version: string): Promise<number> {
  const r = await (await g.admin(`/admin/api/releases/${version}`)).json();
  return r.assets[0].downloads;
}

if (unavailable) {
  console.warn(`S3 download tests skipped: ${unavailable}`);
  test.skip(`S3 download tests: ${unavailable}`, () => {});
} else {
  const SIZE = 200_000;
  const data = crypto.getRandomValues(new Uint8Array(SIZE));
  const etag = `"sha256-${sha256(data)}"`;
  const name = "Gantry-2.0.0-x64-setup.exe";
  const disposition = `attachment; filename="${name}"; filename*=UTF-8''${name}`;

  describe("S3, redirecting plain downloads (default)", () => {
    let g: Gantry;
    let id: number;
    beforeAll(async () => {
      g = await gantryOnS3(true);
      id = await publish(g, "2.0.0", name, data);
    }, 120_000);
    afterAll(() => g?.stop());

    test("a plain GET counts once and redirects to a short-lived bucket URL with Gantry's headers", async () => {
      const url = await link(g, id);
      const before = await downloads(g, "2.0.0");
      const res = await fetch(url, { redirect: "manual" });
      expect(res.status).toBe(302);
      expect(res.headers.get("cache-control")).toBe("private, no-store");
      const direct = new URL(res.headers.get("location")!);
      expect(direct.origin).not.toBe(new URL(g.url).origin);
      expect(direct.searchParams.get("X-Amz-Expires")).toBe("300");
      expect(await downloads(g, "2.0.0")).toBe(before + 1);
      // The link lives on for resumes until its expiry, and the same client's second GET does not count again.
      expect((await fetch(url, { redirect: "manual" })).status).toBe(302);
      expect(await downloads(g, "2.0.0")).toBe(before + 1);
      const bytes = await fetch(direct);
      expect(bytes.status).toBe(200);
      expect(bytes.headers.get("content-length")).toBe(String(SIZE));
      expect(bytes.headers.get("content-type")).toBe("application/vnd.microsoft.portable-executable");
      expect(bytes.headers.get("content-disposition")).toBe(disposition);
      expect(sha256(new Uint8Array(await bytes.arrayBuffer()))).toBe(sha256(data));
    });

    test("HEAD, a Range and If-Range are answered by Gantry with its ETag, never redirected", async () => {
      const url = await link(g, id);
      const head = await fetch(url, { method: "HEAD", redirect: "manual" });
      expect(head.status).toBe(200);
      expect(head.headers.get("etag")).toBe(etag);
      expect(head.headers.get("content-length")).toBe(String(SIZE));
      const part = await fetch(url, { headers: { range: "bytes=1000-1999", "if-range": etag }, redirect: "manual" });
      expect(part.status).toBe(206);
      expect(part.headers.get("etag")).toBe(etag);
      expect(part.headers.get("content-range")).toBe(`bytes 1000-1999/${SIZE}`);
      expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([...data.subarray(1000, 2000)]);
      const multi = await fetch(url, { headers: { range: "bytes=0-9,100-109" }, redirect: "manual" });
      expect(multi.status).toBe(206);
      expect(multi.headers.get("content-type")).toStartWith("multipart/byteranges; boundary=");
      await multi.arrayBuffer();
      // A stale If-Range gets the whole file from Gantry, not the bucket's idea of the range.
      const stale = await fetch(url, { headers: { range: "bytes=0-9", "if-range": '"sha256-old"' }, redirect: "manual" });
      expect(stale.status).toBe(200);
      expect(stale.headers.get("etag")).toBe(etag);
      expect(sha256(new Uint8Array(await stale.arrayBuffer()))).toBe(sha256(data));
      // A complete GET does not spend the link: it serves until its expiry.
      expect((await fetch(url, { redirect: "manual" })).status).toBe(302);
    });

    test("a file larger than one part goes up in parts and downloads byte for byte", async () => {
      const big = new Uint8Array(9 * 1024 * 1024 + 7);
      for (let i = 0; i < big.length; i += 1024) big[i] = (i >> 10) & 0xff;
      const bigId = await publish(g, "2.1.0", "Gantry-2.1.0-x64-setup.exe", big);
      const res = await fetch(await link(g, bigId));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe(String(big.length));
      expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(big));
      const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
      expect(doc.assets[0].sha256).toBe(`sha256:${sha256(big)}`);
    }, 60_000);
  });

  describe("S3, streaming through Gantry (GANTRY_S3_REDIRECT_DOWNLOADS=false)", () => {
    let g: Gantry;
    let id: number;
    beforeAll(async () => {
      g = await gantryOnS3(false);
      id = await publish(g, "2.0.0", name, data);
    }, 120_000);
    afterAll(() => g?.stop());

    test("a plain GET is answered by Gantry with the bytes and its headers; the link serves again until its expiry", async () => {
      const url = await link(g, id);
      const res = await fetch(url, { redirect: "manual" });
      expect(res.status).toBe(200);
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("content-disposition")).toBe(disposition);
      expect(res.headers.get("accept-ranges")).toBe("bytes");
      expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(data));
      const again = await fetch(url, { redirect: "manual" });
      expect(again.status).toBe(200);
      await again.arrayBuffer();
    });

    test("a range is read from the bucket as a range", async () => {
      const url = await link(g, id);
      const res = await fetch(url, { headers: { range: `bytes=-100` } });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes ${SIZE - 100}-${SIZE - 1}/${SIZE}`);
      expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([...data.subarray(SIZE - 100)]);
    });
  });
}
