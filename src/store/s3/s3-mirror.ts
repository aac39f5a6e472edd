/**
 * The Mirror in an S3 bucket (GANTRY_S3_BUCKET), for instances that share no disk. Objects are named by their
 * SHA-256 (`sha256/ab/abcdef…`), as on the file system.
 *
 * A write first spools the bytes to a temporary file in the data dir while hashing them, and uploads only once
 * size and digest are known and checked: a truncated or mismatched download never reaches the bucket, and
 * nothing is ever stored under a name that does not match its bytes (S3 has no rename to do it afterwards).
 * Files larger than one part go up as a multipart upload.
 *
 * Reads are lazy S3 objects: slices become ranged GETs, so a Range request reads only its bytes from S3.
 */
import { S3Client, type S3File } from "bun";
import { mkdirSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { MirrorWriteError, type DirectUrlOptions, type Mirror, type MirrorLocation, type MirrorObject, type PutOptions } from "../../site/releases/mirror";
import { sweepTempFiles, tempFileName } from "../files/temp-files";
import { writeHashed } from "../files/write-hashed";

const SHA_RE = /^[0-9a-f]{64}$/;
/** Multipart above this size, in parts of this size (S3's minimum part is 5 MiB). */
const PART_BYTES = 8 * 1024 * 1024;

export interface S3MirrorOptions {
  bucket: string;
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Where writes are spooled before the upload (the data dir's mirror/.tmp). */
  spoolDir: string;
  /** Hand out presigned URLs for direct downloads (directUrl); otherwise Gantry streams the bytes. */
  presign?: boolean;
}

export class S3Mirror implements Mirror {
  private readonly client: S3Client;
  readonly location: MirrorLocation;

  constructor(private readonly options: S3MirrorOptions) {
    this.location = { kind: "s3", bucket: options.bucket, endpoint: options.endpoint || null };
    this.client = new S3Client({
      bucket: options.bucket,
      endpoint: options.endpoint || undefined,
      region: options.region || undefined,
      accessKeyId: options.accessKeyId || undefined,
      secretAccessKey: options.secretAccessKey || undefined,
    });
  }

  /** The only way an object name is formed: from a validated hex digest. */
  private keyOf(sha256: string): string {
    if (!SHA_RE.test(sha256)) throw new MirrorWriteError("not a SHA-256 digest");
    return `sha256/${sha256.slice(0, 2)}/${sha256}`;
  }

  /** Fails early with a clear message when the bucket cannot be reached or used (wrong endpoint, keys, name). */
  async check(): Promise<void> {
    try {
      await this.client.list({ maxKeys: 1, prefix: "sha256/" });
    } catch (err) {
      throw new Error(`the S3 bucket "${this.options.bucket}" cannot be used: ${describe(err)}`);
    }
  }

  async put(body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<MirrorObject> {
    mkdirSync(this.options.spoolDir, { recursive: true });
    // Spools of killed writes go before this one adds its own.
    await this.sweep();
    const spool = join(this.options.spoolDir, tempFileName("s3part"));
    try {
      // The body's own failure (a caller that went away) is passed on as it is, as the file-system mirror does.
      const stored = await spoolAndHash(body, spool, options);
      const { sha256, size } = stored;
      const target = this.client.file(this.keyOf(sha256));
      try {
        // Same digest = same bytes: an object already there is this one.
        if (!(await target.exists())) await upload(target, spool, size, options.signal);
      } catch (err) {
        if (err instanceof MirrorWriteError) throw err;
        // Not the caller's fault (a 500, logged), unlike a body of the wrong size or digest.
        throw new Error(`S3 upload failed: ${describe(err)}`);
      }
      return stored;
    } finally {
      await rm(spool, { force: true }).catch(() => {});
    }
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA_RE.test(sha256)) return false;
    return this.client.file(this.keyOf(sha256)).exists();
  }

  async open(sha256: string): Promise<Blob | null> {
    if (!SHA_RE.test(sha256)) return null;
    const file = this.client.file(this.keyOf(sha256));
    let size: number;
    try {
      size = (await file.stat()).size;
    } catch (err) {
      if ((err as { code?: string }).code === "NoSuchKey") return null;
      throw err;
    }
    // A slice with both ends known has its size; each further slice is a ranged GET.
    return file.slice(0, size);
  }

  async remove(sha256: string): Promise<void> {
    if (!SHA_RE.test(sha256)) return;
    await this.client.file(this.keyOf(sha256)).delete();
  }

  async directUrl(sha256: string, options: DirectUrlOptions): Promise<string | null> {
    if (!this.options.presign || !SHA_RE.test(sha256)) return null;
    // The signed query asks S3 to answer with Gantry's own download headers (response-content-*).
    return this.client.file(this.keyOf(sha256)).presign({
      method: "GET",
      expiresIn: options.expiresInSeconds,
      contentDisposition: options.contentDisposition,
      type: options.contentType,
    });
  }

  /**
   * Spooled files of writes killed mid-way: at once when their process is gone, else once untouched for
   * `olderThanMs`; never one a live process is writing. (An incomplete multipart upload is S3's to expire: a
   * lifecycle rule.)
   */
  async sweep(olderThanMs = 3_600_000): Promise<void> {
    sweepTempFiles(this.options.spoolDir, [".s3part"], olderThanMs);
  }
}

async function spoolAndHash(body: ReadableStream<Uint8Array>, path: string, options: PutOptions): Promise<MirrorObject> {
  const file = await open(path, "w", 0o600);
  try {
    return await writeHashed(body, file, options);
  } finally {
    await file.close();
  }
}

async function upload(target: S3File, spool: string, size: number, signal?: AbortSignal): Promise<void> {
  if (size <= PART_BYTES) {
    await target.write(Bun.file(spool));
    return;
  }
  const writer = target.writer({ partSize: PART_BYTES, queueSize: 2, retry: 2 });
  try {
    for await (const chunk of Bun.file(spool).stream()) {
      if (signal?.aborted) throw new MirrorWriteError("aborted");
      writer.write(chunk);
      // Waits while parts are in flight: memory stays at a few parts whatever the file's size.
      await writer.flush();
    }
    await writer.end();
  } catch (err) {
    // Aborts the multipart upload, so no half-written object appears.
    await Promise.resolve(writer.end(err as Error)).catch(() => {});
    throw err;
  }
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return [e.code, e.message].filter(Boolean).join(": ") || String(err);
}
