/**
 * Reads an upstream stream up to its first content, holding the opening events, so an attempt that fails before it
 * (an `error` event, `response.failed`, a cut) can be replaced by another account's with nothing sent to the
 * caller. The bytes read are kept as they came (no copy, no re-encoding) and handed on with the reader: the event
 * source then reads them first, as if the stream had not been touched.
 */
import { classify } from "../wire/stream-event";
import { createSseDecoder } from "../wire/sse-decode";
import type { HeldBody } from "../pipeline/event-source";
import { HOLD_MAX_BYTES, HOLD_MAX_EVENTS, openingVerdict } from "./rules/opening";

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
  const prefix: Uint8Array[] = [];
  let bytes = 0;
  let events = 0;
  const fail = (inBand: "error" | "cut", code: string | null, message: string): HoldOutcome => {
    reader.cancel().catch(() => {});
    return { committed: false, inBand, code, message };
  };
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    const read = reader.read();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const quiet = new Promise<"quiet">((resolve) => (timer = setTimeout(resolve, quietMs, "quiet")));
    try {
      const first = await Promise.race([read, quiet]);
      // Still waiting for the first content: the call stays with this account, the read under way goes with it.
      if (first === "quiet") return { committed: true, body: { prefix, reader, pending: read } };
      chunk = first;
    } catch (err) {
      return fail("cut", null, `the stream broke before any content: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    if (chunk.done) return fail("cut", null, "the stream ended before any content");
    prefix.push(chunk.value);
    bytes += chunk.value.byteLength;
    let decoded;
    try {
      decoded = decoder.push(chunk.value);
    } catch {
      // An event too large to judge: the event source meets it again and fails the call as it always has.
      return { committed: true, body: { prefix, reader } };
    }
    for (const sse of decoded) {
      let e;
      try {
        e = classify(sse);
      } catch {
        return { committed: true, body: { prefix, reader } };
      }
      if (e === "done") continue;
      const verdict = openingVerdict(e);
      if (verdict === "commit") return { committed: true, body: { prefix, reader } };
      if (verdict !== "hold") return fail("error", verdict.failed.code, verdict.failed.message);
      events++;
    }
    if (events >= HOLD_MAX_EVENTS || bytes >= HOLD_MAX_BYTES) return { committed: true, body: { prefix, reader } };
  }
}
