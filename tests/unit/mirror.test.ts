import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MirrorWriteError } from "../../src/site/releases/mirror";
import { FileSystemMirror } from "../../src/store/files/fs-mirror";

const dirs: string[] = [];
function mirror(): FileSystemMirror {
  const d = mkdtempSync(join(tmpdir(), "gantry-mirror-"));
  dirs.push(d);
  return new FileSystemMirror(join(d, "mirror"));
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
function chunked(bytes: Uint8Array, size = 1000): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i >= bytes.length) return c.close();
      c.enqueue(bytes.slice(i, i + size));
      i += size;
    },
  });
}
const data = crypto.getRandomValues(new Uint8Array(65_000));

describe("FileSystemMirror", () => {
  test("stores by digest, hashing while streaming, with progress", async () => {
    const m = mirror();
    const seen: number[] = [];
    const obj = await m.put(chunked(data), { expectedSize: data.length, onProgress: (n) => seen.push(n) });
    expect(obj).toEqual({
      sha256: sha(data),
      size: data.length,
      sha512: new Bun.CryptoHasher("sha512").update(data).digest("base64"),
      sha1: new Bun.CryptoHasher("sha1").update(data).digest("hex"),
    });
    expect(seen.at(-1)).toBe(data.length);
    expect(seen.length).toBe(65);
    expect(existsSync(join(m.root, obj.sha256.slice(0, 2), obj.sha256))).toBe(true);
    const blob = (await m.open(obj.sha256))!;
    expect(new Uint8Array(await blob.slice(10, 20).arrayBuffer())).toEqual(data.slice(10, 20));
    expect(await m.has(obj.sha256)).toBe(true);
    // The temp area is empty once the write is in place.
    expect(readdirSync(join(m.root, ".tmp"))).toEqual([]);
  });

  test("a short, long or wrong-digest stream leaves nothing behind", async () => {
    const m = mirror();
    await expect(m.put(chunked(data), { expectedSize: data.length + 1 })).rejects.toBeInstanceOf(MirrorWriteError);
    await expect(m.put(chunked(data), { expectedSize: data.length - 1 })).rejects.toBeInstanceOf(MirrorWriteError);
    await expect(m.put(chunked(data), { expectedSha256: "00".repeat(32) })).rejects.toThrow(/mismatch/);
    expect(readdirSync(join(m.root, ".tmp"))).toEqual([]);
    expect(await m.has(sha(data))).toBe(false);
  });

  test("a failing source stream aborts the write cleanly", async () => {
    const m = mirror();
    let n = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ < 3) c.enqueue(new Uint8Array(10));
        else c.error(new Error("connection reset"));
      },
    });
    await expect(m.put(failing)).rejects.toThrow("connection reset");
    expect(readdirSync(join(m.root, ".tmp"))).toEqual([]);
  });

  test("identical bytes are stored once; remove", async () => {
    const m = mirror();
    const a = await m.put(chunked(data));
    const b = await m.put(new Blob([data]).stream());
    expect(b).toEqual(a);
    await m.remove(a.sha256);
    expect(await m.has(a.sha256)).toBe(false);
    expect(await m.open(a.sha256)).toBeNull();
  });

  test("nothing but a hex digest ever becomes a path", async () => {
    const m = mirror();
    for (const bad of ["../../etc/passwd", "..", "", "AB".repeat(32), "g".repeat(64), `${"a".repeat(63)}/`]) {
      expect(await m.has(bad)).toBe(false);
      expect(await m.open(bad)).toBeNull();
      await m.remove(bad);
    }
  });
});
