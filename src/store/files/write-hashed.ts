/**
 * The one way asset bytes are taken in, by every mirror: read the stream into an open file, hashing exactly the
 * bytes written, with the expected size and digest checked. Awaiting each write is the backpressure: the stream
 * is never read faster than the disk takes it. On failure the stream is cancelled; the caller removes the file.
 */
import type { FileHandle } from "node:fs/promises";
import { MirrorWriteError, type MirrorObject, type PutOptions } from "../../site/releases/mirror";

export async function writeHashed(body: ReadableStream<Uint8Array>, file: FileHandle, options: PutOptions): Promise<MirrorObject> {
  const hasher = new Bun.CryptoHasher("sha256");
  // The updaters' digests in the same pass: the bytes are read once, whoever asks later (asset-digests.ts).
  const sha512 = new Bun.CryptoHasher("sha512");
  const sha1 = new Bun.CryptoHasher("sha1");
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      if (options.signal?.aborted) throw new MirrorWriteError("aborted");
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (options.expectedSize != null && size > options.expectedSize) {
        throw new MirrorWriteError(`received more than the expected ${options.expectedSize} bytes`);
      }
      hasher.update(value);
      sha512.update(value);
      sha1.update(value);
      let offset = 0;
      while (offset < value.byteLength) offset += (await file.write(value, offset, value.byteLength - offset)).bytesWritten;
      options.onProgress?.(size);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
  if (options.expectedSize != null && size !== options.expectedSize) {
    throw new MirrorWriteError(`received ${size} bytes, expected ${options.expectedSize}`);
  }
  const sha256 = hasher.digest("hex");
  if (options.expectedSha256 && options.expectedSha256.toLowerCase() !== sha256) {
    throw new MirrorWriteError(`SHA-256 mismatch: got ${sha256}, expected ${options.expectedSha256.toLowerCase()}`);
  }
  return { sha256, size, sha512: sha512.digest("base64"), sha1: sha1.digest("hex") };
}
