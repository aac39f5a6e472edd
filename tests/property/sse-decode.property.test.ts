import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createSseDecoder, parseStreamEvent, StreamProtocolError, type SseEvent } from "../../src/gateway/wire/sse-decode";
import { decodeChunks } from "../support/fixtures";
import { cutPoints, junkJson, runs, splitAt, trickyString } from "./arbitraries";

const utf8 = new TextEncoder();


/** Independent whole-text reading of the WHATWG rules (same end-of-stream leniency as the decoder). */
function referenceDecode(text: string): SseEvent[] {
  const lines = (text.startsWith("\uFEFF") ? text.slice(1) : text).split(/\r\n|\r|\n/);
  const events: SseEvent[] = [];
  let data: string[] | null = null;
  let event = "";
  let id = "";
  let retry: number | undefined;
  const dispatch = () => {
    if (data !== null) {
      const e: SseEvent = { data: data.join("\n") };
      if (event) e.event = event;
      if (id) e.id = id;
      if (retry !== undefined) e.retry = retry;
      events.push(e);
    }
    data = null;
    event = "";
    retry = undefined;
  };
  for (const line of lines) {
    if (line === "") {
      dispatch();
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") (data ??= []).push(value);
    else if (name === "event") event = value;
    else if (name === "id" && !value.includes("\0")) id = value;
    else if (name === "retry" && /^[0-9]+$/.test(value)) retry = Number(value);
  }
  dispatch();
  return events;
}

// ---- a model of event streams --------------------------------------------------------------------------

/** One character of a field value: ASCII, 2-, 3- and 4-byte UTF-8, NUL, BOM, colon. Never CR or LF. */
const valueChar = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("a", "b", "Z", "0", "7", " ", ":", "{", "}", '"', "\t") },
  { weight: 2, arbitrary: fc.constantFrom("é", "ß", "中", "€", "👋", "𝄞", "\u0000", "\uFEFF", "\u2028") },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0x20, max: 0x10ffff })
      .filter((cp) => cp < 0xd800 || cp > 0xdfff)
      .map((cp) => String.fromCodePoint(cp)),
  },
);
const value = fc.string({ unit: valueChar, maxLength: 12 });

const fieldName = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("data", "event", "id", "retry") },
  { weight: 1, arbitrary: fc.constantFrom("Data", "foo", "data ", "ev", "", "\uFEFFdata") },
);
const separator = fc.constantFrom(":", ": ", ":  ", "");
const retryValue = fc.oneof(fc.nat({ max: 100000 }).map(String), fc.constantFrom("1.5", "-1", "x1", "", "99999999999999999999"));

const line = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fieldName, separator, value).map(([n, s, v]) => (s === "" ? n : n + s + v)) },
  { weight: 1, arbitrary: fc.tuple(separator, retryValue).map(([s, v]) => "retry" + (s === "" ? "" : s + v)) },
  { weight: 1, arbitrary: value.map((v) => ":" + v) },
  { weight: 3, arbitrary: fc.constant("") },
);
const terminator = fc.constantFrom("\n", "\r", "\r\n");

/** Text of an event stream: lines with mixed terminators, maybe a BOM, maybe no final terminator. */
const streamText = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(line, terminator), { maxLength: 25 }), fc.boolean())
  .map(([bom, lines, dropLast]) => {
    let text = bom ? "\uFEFF" : "";
    lines.forEach(([l, t], i) => {
      text += l;
      if (!(dropLast && i === lines.length - 1)) text += t;
    });
    return text;
  });

/** Byte offsets where a split is most likely to go wrong: right after a CR, and inside a UTF-8 sequence. */
function trickyOffsets(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 13) out.push(i + 1);
    if (i > 0 && (bytes[i] & 0xc0) === 0x80) out.push(i);
  }
  return out;
}

const streamAndCuts = fc.tuple(streamText, fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 }));

function bytesCuts(bytes: Uint8Array, anyCuts: number[], trickyPicks: number[]): number[] {
  const tricky = trickyOffsets(bytes);
  const picked = tricky.length === 0 ? [] : trickyPicks.map((n) => tricky[n % tricky.length]);
  return cutPoints(bytes.length, anyCuts).concat(picked).sort((a, b) => a - b);
}

describe("SSE decoder: chunk boundaries do not matter", () => {
  test("the whole stream decodes like the reference reading", () => {
    fc.assert(
      fc.property(streamText, (text) => {
        expect(decodeChunks([utf8.encode(text)])).toEqual(referenceDecode(text));
        expect(decodeChunks([text])).toEqual(referenceDecode(text));
      }),
      runs(400),
    );
  });

  test("byte chunks cut anywhere (inside UTF-8 sequences, between CR and LF) decode like the whole stream", () => {
    fc.assert(
      fc.property(streamAndCuts, ([text, anyCuts, trickyPicks]) => {
        const bytes = utf8.encode(text);
        const chunks = splitAt(bytes, bytesCuts(bytes, anyCuts, trickyPicks));
        expect(decodeChunks(chunks)).toEqual(referenceDecode(text));
      }),
      runs(400),
    );
  });

  test("one byte per chunk decodes like the whole stream", () => {
    fc.assert(
      fc.property(streamText, (text) => {
        const bytes = utf8.encode(text);
        const chunks: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i++) chunks.push(bytes.subarray(i, i + 1));
        expect(decodeChunks(chunks)).toEqual(referenceDecode(text));
      }),
      runs(150),
    );
  });

  test("string chunks cut anywhere (even inside a surrogate pair) decode like the whole stream", () => {
    fc.assert(
      fc.property(streamText, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        expect(decodeChunks(splitAt(text, cutPoints(text.length, cuts)))).toEqual(referenceDecode(text));
      }),
      runs(300),
    );
  });

  test("string and byte chunks mixed, cut at character boundaries, decode like the whole stream", () => {
    fc.assert(
      fc.property(streamText, fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 10 }), (text, cuts) => {
        const chars = [...text];
        const points = cutPoints(chars.length, cuts.map(([n]) => n));
        const chunks = splitAt(chars, points).map((cs, i) => {
          const s = cs.join("");
          return cuts[i]?.[1] ? utf8.encode(s) : s;
        });
        expect(decodeChunks(chunks)).toEqual(referenceDecode(text));
      }),
      runs(300),
    );
  });

  test("a string chunk after bytes cut inside a character flushes the unfinished character in place", () => {
    fc.assert(
      fc.property(streamAndCuts, fc.array(fc.boolean(), { maxLength: 14 }), ([text, anyCuts, trickyPicks], asString) => {
        const bytes = utf8.encode(text);
        const chunks: Array<Uint8Array | string> = splitAt(bytes, bytesCuts(bytes, anyCuts, trickyPicks));
        // Some chunks travel as strings (their bytes read on their own); the rest as bytes.
        asString.forEach((s, i) => {
          if (s && i < chunks.length) chunks[i] = new TextDecoder().decode(chunks[i] as Uint8Array);
        });
        // The text the decoder must see: each run of byte chunks read as one, each string as it is.
        let spelled = "";
        let run: number[] = [];
        const flush = () => {
          spelled += new TextDecoder("utf-8", { ignoreBOM: true }).decode(Uint8Array.from(run));
          run = [];
        };
        for (const c of chunks) {
          if (typeof c === "string") {
            flush();
            spelled += c;
          } else run.push(...c);
        }
        flush();
        expect(decodeChunks(chunks)).toEqual(referenceDecode(spelled));
      }),
      runs(300),
    );
  });

  test("a decoder reused after end() decodes the next stream like a fresh one", () => {
    fc.assert(
      fc.property(streamText, streamText, (a, b) => {
        const d = createSseDecoder();
        const first = [...d.push(utf8.encode(a)), ...d.end()];
        const second = [...d.push(utf8.encode(b)), ...d.end()];
        expect(first).toEqual(referenceDecode(a));
        expect(second).toEqual(referenceDecode(b));
      }),
      runs(200),
    );
  });
});

describe("SSE decoder: arbitrary bytes", () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    // Bytes that are mostly SSE syntax, so lines and fields actually form.
    fc
      .array(
        fc.oneof(
          fc.constantFrom(10, 13, 58, 32, 0xef, 0xbb, 0xbf, 0xc3, 0xa9, 0xf0, 0x9f, 0x80, 0xff, 0),
          fc.constantFrom(..."data:event:id:retry:0123".split("").map((c) => c.charCodeAt(0))),
        ),
        { maxLength: 200 },
      )
      .map((a) => Uint8Array.from(a)),
  );

  test("push and end never throw, every event is well formed, and the split does not matter", () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 10 }), (input, cuts) => {
        const whole = decodeChunks([input]);
        const split = decodeChunks(splitAt(input, cutPoints(input.length, cuts)));
        expect(split).toEqual(whole);
        // TextDecoder's replacement of invalid sequences is itself split-independent, so the oracle still holds.
        expect(whole).toEqual(referenceDecode(new TextDecoder("utf-8", { ignoreBOM: true }).decode(input)));
        for (const e of whole) {
          expect(typeof e.data).toBe("string");
          if (e.event !== undefined) expect(e.event).not.toBe("");
          if (e.id !== undefined) expect(e.id.includes("\0")).toBe(false);
          if (e.retry !== undefined) expect(e.retry >= 0).toBe(true);
          expect(e.data.includes("\r")).toBe(false);
          expect(/[\r\n]/.test((e.event ?? "") + (e.id ?? ""))).toBe(false);
        }
      }),
      runs(400),
    );
  });
});

describe("parseStreamEvent: arbitrary payloads", () => {
  const payload = fc.oneof(
    junkJson(["type", "error", "delta", "response"]).map((v) => JSON.stringify(v)),
    trickyString,
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constantFrom('{"type":""}', '{"type":"","error":null}', '{"error":{"message":"x"}}', '{"type":5,"error":"x"}', '{"error":null}', " [DONE] "),
  );
  test("returns done or an event with a non-empty string type, or throws StreamProtocolError; nothing else", () => {
    fc.assert(
      fc.property(payload, fc.option(trickyString, { nil: undefined }), (data, event) => {
        let parsed: ReturnType<typeof parseStreamEvent>;
        try {
          parsed = parseStreamEvent(event === undefined ? { data } : { data, event });
        } catch (err) {
          expect(err).toBeInstanceOf(StreamProtocolError);
          return;
        }
        if (parsed === "done") return;
        expect(parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)).toBe(true);
        expect(typeof parsed.type).toBe("string");
        expect(parsed.type).not.toBe("");
      }),
      runs(500),
    );
  });
});
