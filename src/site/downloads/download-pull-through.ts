/**
 * Pull-through mirroring of a proxied asset: while a complete pass of the upstream's bytes streams to a caller,
 * the same bytes are written into the mirror, which hashes them and checks the size; once stored, the asset's
 * SHA-256 and size are known and later requests are served from the mirror.
 *
 * Why not `ReadableStream.tee()`: a tee buffers whatever the slower branch has not read, so a slow caller would
 * make the server hold up to the whole file in memory. Here the caller's reads drive the upstream, and each chunk
 * is handed to the mirror as it goes to the caller; the mirror writes faster than a network caller reads, so
 * nothing piles up. A caller that leaves early, or an upstream that breaks, fails the mirror write (its temp
 * file is removed): only a complete pass is stored.
 */
import type { Mirror, MirrorObject } from "../releases/mirror";

export interface PullThrough {
  mirror: Pick<Mirror, "put">;
  /** The bytes are in the mirror under this digest. */
  stored(object: MirrorObject): void;
  /** The pass was not stored (caller left, upstream broke, wrong size): told for the log. */
  failed(err: unknown): void;
}

export function pullThrough(body: ReadableStream<Uint8Array>, expectedSize: number | null, to: PullThrough): ReadableStream<Uint8Array> {
  let feed: ReadableStreamDefaultController<Uint8Array> | null = null;
  const copy = new ReadableStream<Uint8Array>({
    start(c) {
      feed = c;
    },
  });
  // A failed write stops the copy; the caller's stream goes on untouched.
  const stop = () => {
    feed = null;
  };
  to.mirror.put(copy, { expectedSize }).then(to.stored, (err) => {
    stop();
    to.failed(err);
  });
  const toMirror = (fn: (c: ReadableStreamDefaultController<Uint8Array>) => void) => {
    if (!feed) return;
    try {
      fn(feed);
    } catch {
      stop();
    }
  };

  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          toMirror((f) => f.close());
          stop();
          c.close();
          return;
        }
        // A copy: the caller's chunk may be handed to the socket and detached.
        toMirror((f) => f.enqueue(value.slice()));
        c.enqueue(value);
      } catch (err) {
        toMirror((f) => f.error(err));
        stop();
        c.error(err);
      }
    },
    cancel(reason) {
      toMirror((f) => f.error(new Error("the caller left before the end")));
      stop();
      return reader.cancel(reason);
    },
  });
}
