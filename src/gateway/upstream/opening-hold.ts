/**
 * Reads an upstream stream up to its first content, holding the opening events, so an attempt that fails before it
 * (an `error` event, `response.failed`, a cut) can be replaced by another account's with nothing sent to the
 * caller. What the hold decoded is handed on with its decoder and the reader: the event source takes those events
 * first and goes on with the same decoder, so no event is decoded twice. The hold decodes no further than the first
 * content: a chunk is fed to its decoder one event at a time (cut after each blank line), and the bytes that follow
 * the event that commits are handed on as they came (no copy), left to the event source (a fast upstream sends the
 * whole stream in one chunk).
 */
import { classify } from "../wire/stream-event";
import { createSseDecoder, type SseEvent } from "../wire/sse-decode";
import type { HeldBody } from "../pipeline/event-source";
import { HOLD_MAX_BYTES, HOLD_MAX_EVENTS, openingVerdict } from "./rules/opening";
import { QuietWatch } from "./quiet-watch";

export type HoldOutcome =
  | { committed: true; body: HeldBody }
  /** Failed before content: the stream is cancelled; `cut` when it ended or broke without saying why. */
  | { committed: false; inBand: "error" | "cut"; code: string | null; message: string };

/**
 * `quietMs`: an upstream silent this long before its first content commits the call anyway (the caller then gets its
 * headers and keep-alives, as without a pool; a slow first token is not a failure).
 */
export async function holdOpening(body: ReadableStream<Uint8Array>, maxEventBytes: number, quietMs: number): Promise<HoldOutcome> {
  const reader = body.getReader();
  const decoder = createSseDecoder(maxEventBytes);
  // Every chunk read, for the one case the decoder's state cannot be handed on (it threw): then they are read again.
  const prefix: Uint8Array[] = [];
  const decodedEvents: SseEvent[] = [];
  const opened = { events: decodedEvents, decoder };
  // One watch for the whole hold (not a timer per read): most holds end within the first chunk or two.
  const quiet = new QuietWatch(quietMs);
  let bytes = 0;
  let events = 0;
  const fail = (inBand: "error" | "cut", code: string | null, message: string): HoldOutcome => {
    reader.cancel().catch(() => {});
    return { committed: false, inBand, code, message };
  };
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      const read = reader.read();
      try {
        const first = await quiet.race(read);
        // Still waiting for the first content: the call stays with this account, the read under way goes with it.
        if (first === QuietWatch.QUIET) return { committed: true, body: { prefix: [], reader, pending: read, opened } };
        chunk = first;
      } catch (err) {
        return fail("cut", null, `the stream broke before any content: ${(err as Error).message}`);
      }
      if (chunk.done) return fail("cut", null, "the stream ended before any content");
      const bytesOf = chunk.value;
      prefix.push(bytesOf);
      bytes += bytesOf.byteLength;
      for (let from = 0; from < bytesOf.byteLength; ) {
        const to = afterBlankLine(bytesOf, from);
        let decoded;
        try {
          decoded = decoder.push(from === 0 && to === bytesOf.byteLength ? bytesOf : bytesOf.subarray(from, to));
        } catch {
          // An event too large to judge: the event source meets it again and fails the call as it always has.
          return { committed: true, body: { prefix, reader } };
        }
        from = to;
        for (const sse of decoded) decodedEvents.push(sse);
        for (const sse of decoded) {
          let e;
          try {
            e = classify(sse);
          } catch {
            return { committed: true, body: { prefix, reader } };
          }
          if (e === "done") continue;
          const verdict = openingVerdict(e);
          if (verdict === "commit") return { committed: true, body: { prefix: from < bytesOf.byteLength ? [bytesOf.subarray(from)] : [], reader, opened } };
          if (verdict !== "hold") return fail("error", verdict.failed.code, verdict.failed.message);
          events++;
        }
      }
      if (events >= HOLD_MAX_EVENTS || bytes >= HOLD_MAX_BYTES) return { committed: true, body: { prefix: [], reader, opened } };
    }
  } finally {
    quiet.stop();
  }
}

const LF = 10;

/**
 * Where the next piece of `bytes` to decode ends: just after the first "\n\n" from `from` (the end of an event as
 * upstreams write it), else the end of the chunk. A CRLF stream is then fed a chunk at a time, which is as correct
 * (the decoder takes any cut), only not as lazy.
 */
function afterBlankLine(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(LF, from); i !== -1 && i + 1 < bytes.byteLength; i = bytes.indexOf(LF, i + 1)) {
    if (bytes[i + 1] === LF) return i + 2;
  }
  return bytes.byteLength;
}
