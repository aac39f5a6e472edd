/**
 * What every Mirror must do, against the interface only: content addressing, reads as lazy Blobs, refusal of
 * short, long or wrong bytes without leaving anything behind, and digests as the only names.
 */
import { createHash } from "node:crypto";
import { afterEach, describe, expect, test } from "bun:test";
import { MirrorWriteError, type Mirror } from "../../src/site/releases/mirror";

export interface MirrorFixture {
  mirror: Mirror;
  close(): Promise<void> | void;
}

function streamOf(bytes: Uint8Array<ArrayBuffer>, chunk = 1000): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.subarray(at, (at += chunk)));
    },
  });
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

export function mirrorConformance(backend: string, make: () => Promise<MirrorFixture>): void {
  describe(`Mirror conformance: ${backend}`, () => {
    let fx: MirrorFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });
    /** What a put reports: the SHA-256 naming the bytes and the updaters' digests (electron-updater, Squirrel.Windows). */
    const digests = (data: Uint8Array) => ({
      sha256: sha256(data),
      size: data.length,
      sha512: new Bun.CryptoHasher("sha512").update(data).digest("base64"),
      sha1: new Bun.CryptoHasher("sha1").update(data).digest("hex"),
    });
    const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

    test("put streams bytes in and names them by their SHA-256 (with SHA-512 and SHA-1 of the same pass); open gives them back, sliceable", async () => {
      const { mirror } = await open();
      const data = bytes(10_000);
      const stored = await mirror.put(streamOf(data));
      expect(stored).toEqual(digests(data));
      // Cross-checked with Node's crypto, as updaters compute them: base64 SHA-512, hex SHA-1.
      expect(stored.sha512).toBe(createHash("sha512").update(data).digest("base64"));
      expect(stored.sha1).toBe(createHash("sha1").update(data).digest("hex"));
      expect(await mirror.has(stored.sha256)).toBe(true);
      const blob = (await mirror.open(stored.sha256))!;
      expect(blob.size).toBe(data.length);
      expect(new Uint8Array(await blob.arrayBuffer())).toEqual(data);
      expect(new Uint8Array(await blob.slice(100, 110).arrayBuffer())).toEqual(data.subarray(100, 110));
    });

    test("the same bytes twice are one object; remove removes it", async () => {
      const { mirror } = await open();
      const data = bytes(3000, 7);
      const [a, b] = await Promise.all([mirror.put(streamOf(data)), mirror.put(streamOf(data, 333))]);
      expect(b).toEqual(a);
      await mirror.remove(a.sha256);
      expect(await mirror.has(a.sha256)).toBe(false);
      expect(await mirror.open(a.sha256)).toBeNull();
      await mirror.remove(a.sha256); // removing what is gone is not an error
    });

    test("a wrong size or digest, or a stream that fails, stores nothing", async () => {
      const { mirror } = await open();
      const data = bytes(5000, 3);
      const digest = sha256(data);
      await expect(mirror.put(streamOf(data), { expectedSize: 4999 })).rejects.toThrow(MirrorWriteError);
      await expect(mirror.put(streamOf(data), { expectedSha256: "0".repeat(64) })).rejects.toThrow(MirrorWriteError);
      let sent = 0;
      const failing = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent++ < 2) c.enqueue(data.subarray(0, 1000));
          else c.error(new Error("connection reset"));
        },
      });
      await expect(mirror.put(failing)).rejects.toThrow("connection reset");
      expect(await mirror.has(digest)).toBe(false);
      expect(await mirror.put(streamOf(data), { expectedSize: 5000, expectedSha256: digest })).toEqual(digests(data));
      await mirror.sweep();
      expect(await mirror.has(digest)).toBe(true);
    });

    test("nothing but a hex digest names an object", async () => {
      const { mirror } = await open();
      for (const bad of ["../../etc/passwd", "..", "", "AB".repeat(32), "g".repeat(64), `${"a".repeat(63)}/`]) {
        expect(await mirror.has(bad)).toBe(false);
        expect(await mirror.open(bad)).toBeNull();
        await mirror.remove(bad);
      }
    });

    test("a direct link, when the backend has one, is a URL; otherwise null", async () => {
      const { mirror } = await open();
      const stored = await mirror.put(streamOf(bytes(100)));
      const url = await mirror.directUrl(stored.sha256, { contentDisposition: "attachment; filename=\"a.bin\"", contentType: "application/octet-stream", expiresInSeconds: 60 });
      if (url !== null) expect(() => new URL(url)).not.toThrow();
    });
  });
}
