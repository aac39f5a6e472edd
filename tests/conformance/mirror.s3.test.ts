/**
 * The Mirror suite against S3 (Ceph's radosgw, started for the run), then what only the S3 mirror does: a large
 * file goes up as a multipart upload and comes back byte for byte; reads of a slice fetch only that range; a
 * presigned link downloads the bytes under the file's name; a wrong bucket fails the check with a clear message.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Mirror } from "../../src/store/s3/s3-mirror";
import { s3Server, s3Unavailable, type S3Server } from "../support/s3";
import { mirrorConformance } from "./mirror.suite";

const unavailable = s3Unavailable();

async function s3Mirror(presign = false): Promise<{ mirror: S3Mirror; s3: S3Server; spoolDir: string; close(): void }> {
  const s3 = await s3Server();
  const bucket = await s3.createBucket();
  const spoolDir = mkdtempSync(join(tmpdir(), "gantry-s3-spool-"));
  const mirror = new S3Mirror({ bucket, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, spoolDir, presign });
  return { mirror, s3, spoolDir, close: () => rmSync(spoolDir, { recursive: true, force: true }) };
}

if (unavailable) {
  console.warn(`S3 mirror tests skipped: ${unavailable}`);
  test.skip(`S3 mirror tests: ${unavailable}`, () => {});
} else {
  // The cluster takes a few seconds to start: not inside the first test's time.
  beforeAll(async () => void (await s3Server()), 120_000);

  mirrorConformance("S3 (radosgw)", async () => {
    const m = await s3Mirror(true);
    return { mirror: m.mirror, close: m.close };
  });

  describe("S3 mirror", () => {
    test("a 20 MiB file goes up in parts and comes back byte for byte; its spool file is gone", async () => {
      const m = await s3Mirror();
      try {
        const size = 20 * 1024 * 1024 + 123;
        const data = new Uint8Array(size);
        for (let i = 0; i < size; i += 4096) data[i] = (i / 4096) & 0xff;
        const chunks = new ReadableStream<Uint8Array>({
          start(c) {
            for (let at = 0; at < size; at += 1 << 20) c.enqueue(data.slice(at, Math.min(size, at + (1 << 20))));
            c.close();
          },
        });
        const stored = await m.mirror.put(chunks, { expectedSize: size });
        expect(stored).toEqual({
          sha256: new Bun.CryptoHasher("sha256").update(data).digest("hex"),
          size,
          sha512: new Bun.CryptoHasher("sha512").update(data).digest("base64"),
          sha1: new Bun.CryptoHasher("sha1").update(data).digest("hex"),
        });
        expect(readdirSync(m.spoolDir)).toEqual([]);
        const blob = (await m.mirror.open(stored.sha256))!;
        expect(blob.size).toBe(size);
        const back = new Uint8Array(await new Response(blob.stream()).arrayBuffer());
        expect(back.length).toBe(size);
        expect(Buffer.compare(back, data)).toBe(0);
        // A slice is a ranged read of just those bytes.
        const mid = new Uint8Array(await blob.slice(10 * 4096, 10 * 4096 + 5).arrayBuffer());
        expect([...mid]).toEqual([...data.subarray(10 * 4096, 10 * 4096 + 5)]);
      } finally {
        m.close();
      }
    }, 60_000);

    test("a presigned link downloads the bytes under the file's name, and only until it expires", async () => {
      const m = await s3Mirror(true);
      try {
        const data = new TextEncoder().encode("presigned bytes");
        const stored = await m.mirror.put(new Blob([data]).stream());
        const url = (await m.mirror.directUrl(stored.sha256, { contentDisposition: `attachment; filename="app 1.0.zip"`, contentType: "application/zip", expiresInSeconds: 60 }))!;
        const res = await fetch(url);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-disposition")).toBe(`attachment; filename="app 1.0.zip"`);
        expect(res.headers.get("content-type")).toBe("application/zip");
        expect(await res.text()).toBe("presigned bytes");
        // Tampering with the signed query is refused by the server.
        const forged = await fetch(url.replace(/X-Amz-Expires=\d+/, "X-Amz-Expires=999999"));
        expect(forged.status).toBe(403);
        await forged.arrayBuffer();
        // Without the presign option there is no direct link: Gantry streams.
        const plain = await s3Mirror(false);
        expect(await plain.mirror.directUrl(stored.sha256, { contentDisposition: "attachment", contentType: "application/zip", expiresInSeconds: 60 })).toBeNull();
        plain.close();
      } finally {
        m.close();
      }
    }, 30_000);

    test("a bucket that does not exist, or a wrong secret, fails the check with a message naming the bucket", async () => {
      const s3 = await s3Server();
      const spoolDir = mkdtempSync(join(tmpdir(), "gantry-s3-spool-"));
      try {
        const missing = new S3Mirror({ bucket: "no-such-bucket", endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, spoolDir });
        await expect(missing.check()).rejects.toThrow(/no-such-bucket/);
        const bucket = await s3.createBucket();
        const wrong = new S3Mirror({ bucket, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: "wrong", spoolDir });
        await expect(wrong.check()).rejects.toThrow(new RegExp(bucket));
      } finally {
        rmSync(spoolDir, { recursive: true, force: true });
      }
    }, 30_000);
  });
}
