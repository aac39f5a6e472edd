/**
 * The opening hold read a piece at a time: a chunk is decoded one event at a time up to the first content (the rest
 * left to the event source, bytes untouched); failures before content are found wherever the chunks cut, in LF and
 * CRLF streams alike.
 */
import { describe, expect, spyOn, test } from "bun:test";
import { holdOpening } from "../../src/gateway/upstream/opening-hold";
import { IDLE, UpstreamEventSource } from "../../src/gateway/pipeline/event-source";

const enc = new TextEncoder();
const frame = (type: string, extra: object = {}, eol = "\n") => `event: ${type}${eol}data: ${JSON.stringify({ type, ...extra })}${eol}${eol}`;
const created = (eol = "\n") => frame("response.created", { response: { id: "r", status: "in_progress", output: [] } }, eol);
const delta = (eol = "\n") => frame("response.output_text.delta", { delta: "hi", item_id: "i", output_index: 0, content_index: 0 }, eol);
const error = (eol = "\n") => frame("error", { code: "server_error", message: "boom" }, eol);

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]!);
      else c.close();
    },
  });
}
/** `text` cut into pieces of `size` bytes. */
const cut = (text: string, size: number) => {
  const bytes = enc.encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
};
const held = (text: string, size = 1 << 20) => holdOpening(streamOf(cut(text, size)), 1 << 20, 60_000);

describe("holdOpening", () => {
  test("one chunk with the whole stream commits at the first delta; what it decoded is handed on with its decoder, the rest as it came", async () => {
    const completed = frame("response.completed", { response: { id: "r", status: "completed", output: [] } });
    const text = created() + delta() + delta() + completed;
    const out = await held(text);
    expect(out.committed).toBe(true);
    if (!out.committed) return;
    // Not decoded twice: the event source takes these events and goes on with the same decoder.
    expect(out.body.opened?.events.map((e) => e.event)).toEqual(["response.created", "response.output_text.delta"]);
    const rest = new TextDecoder().decode(Buffer.concat(out.body.prefix));
    expect(rest).toBe(delta() + completed);
    // The rest is a view on the chunk read, not a copy.
    expect(out.body.prefix[0]!.buffer.byteLength).toBeGreaterThanOrEqual(enc.encode(text).byteLength);
    expect(out.body.opened!.decoder.push(out.body.prefix[0]!).map((e) => e.event)).toEqual(["response.output_text.delta", "response.completed"]);
  });

  test("an event cut across chunks: the decoder handed on holds its first part", async () => {
    const text = created() + delta();
    const at = created().length + 10;
    const out = await holdOpening(streamOf([enc.encode(text.slice(0, at)), enc.encode(text.slice(at))]), 1 << 20, 60_000);
    expect(out.committed).toBe(true);
    if (!out.committed) return;
    expect(out.body.opened?.events.map((e) => e.event)).toEqual(["response.created", "response.output_text.delta"]);
    expect(out.body.prefix).toEqual([]);
  });

  test("what follows the first content in its chunk is not judged (a broken event there is the event source's)", async () => {
    const out = await held(created() + delta() + "event: x\ndata: {not json\n\n");
    expect(out.committed).toBe(true);
  });

  for (const eol of ["\n", "\r\n"]) {
    for (const size of [1, 7, 64, 1 << 20]) {
      test(`an error event before content fails the attempt (${eol === "\n" ? "LF" : "CRLF"}, chunks of ${size} bytes)`, async () => {
        const out = await held(created(eol) + error(eol) + delta(eol), size);
        expect(out).toMatchObject({ committed: false, inBand: "error", code: "server_error", message: "boom" });
      });
      test(`content after the opening commits (${eol === "\n" ? "LF" : "CRLF"}, chunks of ${size} bytes)`, async () => {
        expect((await held(created(eol) + delta(eol) + error(eol), size)).committed).toBe(true);
      });
    }
  }

  test("one quiet timer for the whole hold, not one per read (a stream trickling in 7-byte chunks)", async () => {
    const chunks = cut(created() + created() + created() + delta(), 7);
    let i = 0;
    // Each chunk a macrotask later: every read has to wait.
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setImmediate(r));
        if (i < chunks.length) c.enqueue(chunks[i++]!);
        else c.close();
      },
    });
    const timers = spyOn(globalThis, "setTimeout");
    try {
      const out = await holdOpening(slow, 1 << 20, 60_000);
      expect(out.committed).toBe(true);
      expect(chunks.length).toBeGreaterThan(50);
      expect(timers.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      timers.mockRestore();
    }
  });

  test("a silent upstream commits the call after the quiet interval, the read under way handed on", async () => {
    let release: (() => void) | null = null;
    const silent = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode(created()));
        release = () => {
          c.enqueue(enc.encode(delta()));
          c.close();
        };
      },
    });
    const out = await holdOpening(silent, 1 << 20, 20);
    expect(out.committed).toBe(true);
    if (!out.committed) return;
    expect(out.body.pending).toBeDefined();
    release!();
    const next = await out.body.pending!;
    expect(new TextDecoder().decode(next.value)).toBe(delta());
  });

  test("a stream that ends before content is a cut", async () => {
    expect(await held(created())).toMatchObject({ committed: false, inBand: "cut" });
  });
});

describe("held body read by the event source", () => {
  const completed = frame("response.completed", { response: { id: "r", status: "completed", output: [] } });
  const text = created() + frame("response.in_progress", { response: { id: "r", status: "in_progress", output: [] } }) + delta() + delta() + completed;
  for (const size of [1, 7, 64, 1 << 20]) {
    test(`every event once and in order, the held ones included (chunks of ${size} bytes)`, async () => {
      const out = await held(text, size);
      expect(out.committed).toBe(true);
      if (!out.committed) return;
      const source = new UpstreamEventSource(out.body, 60_000);
      const types: string[] = [];
      for await (const batch of source.read()) if (batch !== IDLE) types.push(...batch.map((e) => e.type));
      expect(types).toEqual(["response.created", "response.in_progress", "response.output_text.delta", "response.output_text.delta", "response.completed"]);
      expect(source.terminal).not.toBeNull();
    });
  }
});
