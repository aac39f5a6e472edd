/**
 * The file-system Mirror, under `<dataDir>/mirror/`: `ab/abcdef…` for the bytes, `.tmp/` for writes in progress.
 * Writes stream to a temp file while hashing, are fsynced, then renamed into place, so a reader never sees a
 * partial file; a path is only ever formed from a validated hex digest.
 */
import { mkdirSync } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { MirrorWriteError, type Mirror, type MirrorLocation, type MirrorObject, type PutOptions } from "../../site/releases/mirror";
import { sweepTempFiles, tempFileName } from "./temp-files";
import { writeHashed } from "./write-hashed";

/** Temp files of writes: `.part` here, `.s3part` from the S3 mirror's spool (the same directory). */
const TEMP_SUFFIXES = [".part", ".s3part"];
const HOUR_MS = 3_600_000;

const SHA_RE = /^[0-9a-f]{64}$/;

export class FileSystemMirror implements Mirror {
  readonly location: MirrorLocation = { kind: "filesystem" };
  private readonly tmpDir: string;

  constructor(readonly root: string) {
    this.tmpDir = join(root, ".tmp");
  }

  /** The only way a path is formed: from a validated hex digest. */
  private pathOf(sha256: string): string {
    if (!SHA_RE.test(sha256)) throw new MirrorWriteError("not a SHA-256 digest");
    return join(this.root, sha256.slice(0, 2), sha256);
  }

  private tempPath(): string {
    mkdirSync(this.tmpDir, { recursive: true });
    return join(this.tmpDir, tempFileName("part"));
  }

  async put(body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<MirrorObject> {
    // What killed publishes and syncs left goes before a new write adds its own (one directory listing).
    this.sweepTemp();
    const tmp = this.tempPath();
    const file = await open(tmp, "w", 0o644);
    let done = false;
    try {
      const stored = await writeHashed(body, file, options);
      const { sha256 } = stored;
      await file.sync();
      await file.close();
      const target = this.pathOf(sha256);
      mkdirSync(join(this.root, sha256.slice(0, 2)), { recursive: true });
      // Same digest = same bytes: renaming over an existing copy is harmless and atomic.
      await rename(tmp, target);
      done = true;
      return stored;
    } finally {
      if (!done) {
        await file.close().catch(() => {});
        await rm(tmp, { force: true }).catch(() => {});
      }
    }
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA_RE.test(sha256)) return false;
    try {
      return (await stat(this.pathOf(sha256))).isFile();
    } catch {
      return false;
    }
  }

  async open(sha256: string): Promise<Blob | null> {
    if (!(await this.has(sha256))) return null;
    // Bun.file is lazy: slices and Responses built from it are sent with sendfile(2), never buffered.
    return Bun.file(this.pathOf(sha256));
  }

  async remove(sha256: string): Promise<void> {
    if (!SHA_RE.test(sha256)) return;
    await rm(this.pathOf(sha256), { force: true });
  }

  /** The file system has no links of its own: Gantry serves the bytes (with sendfile). */
  async directUrl(): Promise<string | null> {
    return null;
  }

  async sweep(): Promise<void> {
    this.sweepTemp();
  }

  /**
   * Deletes temp files left by writes that were killed mid-way: at once when their process is gone, else once
   * untouched for `olderThanMs` (files of another host or an older Gantry); never one a live process is writing.
   */
  sweepTemp(olderThanMs = HOUR_MS): void {
    sweepTempFiles(this.tmpDir, TEMP_SUFFIXES, olderThanMs);
  }
}
