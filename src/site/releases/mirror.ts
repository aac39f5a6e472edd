/**
 * The asset mirror seam: bytes stored under their SHA-256, so no remote or operator-supplied name ever chooses
 * where they go, and identical files are stored once. The file system implements it by default
 * (store/files/fs-mirror.ts); an object store can implement it as well and hand out direct links.
 */

export interface MirrorObject {
  /** Lowercase hex. */
  sha256: string;
  size: number;
  /**
   * The digests updaters check, computed in the same pass over the bytes (so nothing is hashed per request):
   * SHA-512 in base64 (electron-updater's `sha512`) and SHA-1 in lowercase hex (Squirrel.Windows' RELEASES).
   */
  sha512: string;
  sha1: string;
}

export interface PutOptions {
  /** When known, more or fewer bytes than this fail the write (a truncated or padded download). */
  expectedSize?: number | null;
  /** Lowercase hex; a different digest fails the write. */
  expectedSha256?: string | null;
  signal?: AbortSignal;
  /** Called with the running byte count as chunks are written. */
  onProgress?: (bytes: number) => void;
}

export interface DirectUrlOptions {
  contentDisposition: string;
  contentType: string;
  expiresInSeconds: number;
}

/**
 * Which mirror a backend is: what the database records as the holder of its files (mirror-record.ts), so an
 * instance started with another mirror is refused instead of answering 404 for every file.
 */
export type MirrorLocation = { kind: "filesystem" } | { kind: "s3"; bucket: string; endpoint: string | null };

export interface Mirror {
  /** Where the bytes are kept (the kind, and for a bucket its name and endpoint). */
  readonly location: MirrorLocation;
  /** Streams `body` in, computing size and digests (SHA-256, SHA-512, SHA-1) over exactly the bytes stored. */
  put(body: ReadableStream<Uint8Array>, options?: PutOptions): Promise<MirrorObject>;
  has(sha256: string): Promise<boolean>;
  /** A lazy, sliceable view of the stored bytes (never read into memory), or null when absent. */
  open(sha256: string): Promise<Blob | null>;
  remove(sha256: string): Promise<void>;
  /**
   * A link a client may download the bytes from directly (an object store's presigned URL), valid for
   * `expiresInSeconds`, answering with these Content-Disposition and Content-Type; null when the backend has
   * none (or is not to hand them out) and Gantry serves the bytes.
   */
  directUrl(sha256: string, options: DirectUrlOptions): Promise<string | null>;
  /** Clears what writes killed mid-way left behind (temp files, incomplete uploads). */
  sweep(): Promise<void>;
}

export class MirrorWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MirrorWriteError";
  }
}
