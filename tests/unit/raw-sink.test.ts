/**
 * The raw relay reads only what metering needs from bytes it passes on untouched: the terminal event's usage and the
 * number of deltas. Wherever the upstream's chunks are cut (inside the terminal event's name, between CR and LF, in
 * a multi-byte character), it finds the same.
 */
import { expect, test } from "bun:test";
import { buildResponseEvents, encodeEventFrames } from "../../src/gateway/simulator/events";
import { RawSseRelay } from "../../src/gateway/pipeline/raw-sink";

const USAGE = { input_tokens: 12, output_tokens: 20, total_tokens: 32 };

function stream(opts: { crlf?: boolean; dataOnly?: boolean } = {}): Uint8Array {
  const events = buildResponseEvents({ id: "resp_1", model: "m", createdAt: 1, text: "Grüße 👋 response.completed is only text here", deltas: 6, usage: USAGE });
  let text = encodeEventFrames(events, { crlf: opts.crlf, done: true }).join("");
  if (opts.dataOnly) text = text.replace(/^event: .*\r?\n/gm, "");
  return new TextEncoder().encode(text);
}

async function relay(chunks: Uint8Array[]): Promise<{ relay: RawSseRelay; out: Uint8Array[] }> {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  const r = new RawSseRelay(body, 200, 10, 1024 * 1024);
  const out: Uint8Array[] = [];
  for await (const chunk of r.read()) out.push(r.push(chunk));
  return { relay: r, out };
}

function cuts(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [0, ...at, bytes.length];
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
}

for (const shape of [{}, { crlf: true }, { dataOnly: true }]) {
  test(`usage and deltas found wherever the chunks are cut (${JSON.stringify(shape)})`, async () => {
    const bytes = stream(shape);
    const whole = await relay([bytes]);
    expect(whole.relay.usage).toMatchObject(USAGE);
    expect(whole.relay.ended).toBe(true);
    const deltas = whole.relay.estimate().outputTokens;
    expect(deltas).toBe("dataOnly" in shape ? 0 : 6);
    // Every single cut, and 7-byte chunks: the same usage, the same count, the bytes passed on untouched.
    for (let at = 1; at < bytes.length; at += 3) {
      const { relay: r, out } = await relay(cuts(bytes, [at]));
      expect(r.usage).toMatchObject(USAGE);
      expect(r.estimate().outputTokens).toBe(deltas);
      expect(Buffer.concat(out).equals(Buffer.from(bytes))).toBe(true);
    }
    const small = await relay(cuts(bytes, Array.from({ length: Math.floor((bytes.length - 1) / 7) }, (_, i) => (i + 1) * 7)));
    expect(small.relay.usage).toMatchObject(USAGE);
  });
}

test("no terminal event: nothing settled from the stream, nothing held", async () => {
  const bytes = new TextEncoder().encode('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"x"}\n\n');
  const { relay: r, out } = await relay(cuts(bytes, [10, 40]));
  expect(r.usage).toBeNull();
  expect(r.ended).toBe(false);
  expect(r.estimate().outputTokens).toBe(1);
  expect(Buffer.concat(out).equals(Buffer.from(bytes))).toBe(true);
});
