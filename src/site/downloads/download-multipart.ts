/**
 * `multipart/byteranges` bodies (RFC 9110 §14.6), streamed part by part, with their exact length computed
 * up front (HEAD answers carry it; Bun 1.4 sends streamed GET bodies chunked whatever Content-Length says,
 * oven-sh/bun#10507).
 * Framing follows nginx (a CRLF before every delimiter), which electron-updater's differential downloader
 * and browsers parse.
 */
import { randomBytes } from "node:crypto";
import type { ByteRange } from "./rules/range";
import { contentRange } from "./rules/range";

export interface MultipartBody {
  contentType: string;
  contentLength: number;
  body: ReadableStream<Uint8Array>;
}

const encoder = new TextEncoder();

/**
 * `openPart(range)` supplies each part's bytes when the client gets that far (a mirror slice, or one
 * upstream range request), so nothing is fetched or read ahead of demand.
 */
export function multipartByteranges(
  ranges: readonly ByteRange[],
  size: number,
  partContentType: string,
  openPart: (range: ByteRange) => Promise<ReadableStream<Uint8Array>> | ReadableStream<Uint8Array>,
): MultipartBody {
  const boundary = `gantry-${randomBytes(12).toString("hex")}`;
  const heads = ranges.map((r) =>
    encoder.encode(`\r\n--${boundary}\r\nContent-Type: ${partContentType}\r\nContent-Range: ${contentRange(r.start, r.end, size)}\r\n\r\n`),
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const contentLength =
    heads.reduce((n, h) => n + h.byteLength, 0) + ranges.reduce((n, r) => n + (r.end - r.start + 1), 0) + tail.byteLength;

  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < ranges.length; i++) {
      yield heads[i];
      const expected = ranges[i].end - ranges[i].start + 1;
      let got = 0;
      for await (const chunk of await openPart(ranges[i])) {
        got += chunk.byteLength;
        if (got > expected) throw new Error("a part delivered more bytes than its range");
        yield chunk;
      }
      // A short part would shift every later byte: fail the body rather than send a corrupt one.
      if (got !== expected) throw new Error(`a part delivered ${got} of ${expected} bytes`);
    }
    yield tail;
  }

  return { contentType: `multipart/byteranges; boundary=${boundary}`, contentLength, body: streamFrom(chunks()) };
}

/** A pull-driven stream over an async iterator: one chunk per read, so the reader sets the pace. */
export function streamFrom(iterator: AsyncIterator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await iterator.return?.(undefined);
    },
  });
}

/**
 * Exactly `length` bytes after skipping `skip`: too few is an error (never a silently short file),
 * surplus is dropped and the source's read cancelled. It is
 * also how a stream gets its Content-Length sent: Bun drops the header for a native stream (an object store's)
 * but keeps it for one made here.
 */
export function exactly(body: ReadableStream<Uint8Array> | null, skip: number, length: number): ReadableStream<Uint8Array> {
  async function* run(): AsyncGenerator<Uint8Array> {
    if (!body) throw new Error("the source sent no body");
    const reader = body.getReader();
    let toSkip = skip;
    let left = length;
    try {
      while (left > 0) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the source ended ${left} bytes early`);
        let chunk = value;
        if (toSkip > 0) {
          if (chunk.byteLength <= toSkip) {
            toSkip -= chunk.byteLength;
            continue;
          }
          chunk = chunk.subarray(toSkip);
          toSkip = 0;
        }
        if (chunk.byteLength > left) chunk = chunk.subarray(0, left);
        left -= chunk.byteLength;
        yield chunk;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }
  return streamFrom(run());
}
