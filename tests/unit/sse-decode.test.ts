import { describe, expect, test } from "bun:test";
import { createSseDecoder, parseStreamEvent, SseEventTooLargeError, StreamProtocolError, type SseEvent } from "../../src/gateway/wire/sse-decode";
import { FIXTURE_NAMES, decodeChunks, loadFixture } from "../support/fixtures";

const utf8 = new TextEncoder();


function decodeAll(text: string): SseEvent[] {
  return decodeChunks([text]);
}

/**
 * An independent, deliberately naive reading of the WHATWG rules (whole text, split with a regex), used as the
 * oracle for the streaming decoder. Same end-of-stream leniency as the decoder under test.
 */
function referenceDecode(text: string): SseEvent[] {
  const lines = (text.startsWith("\uFEFF") ? text.slice(1) : text).split(/\r\n|\r|\n/);
  const events: SseEvent[] = [];
  let data: string[] = [];
  let hasData = false;
  let event = "";
  let id = "";
  let retry: number | undefined;
  const dispatch = () => {
    if (hasData) {
      const e: SseEvent = { data: data.join("\n") };
      if (event) e.event = event;
      if (id) e.id = id;
      if (retry !== undefined) e.retry = retry;
      events.push(e);
    }
    data = [];
    hasData = false;
    event = "";
    retry = undefined;
  };
  for (const line of lines) {
    if (line === "") {
      dispatch();
      continue;
    }
    if (line.startsWith(":")) continue;
    const m = /^([^:]*)(?::(.*))?$/s.exec(line)!;
    const name = m[1];
    let value = m[2] ?? "";
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") {
      data.push(value);
      hasData = true;
    } else if (name === "event") event = value;
    else if (name === "id" && !value.includes("\0")) id = value;
    else if (name === "retry" && /^\d+$/.test(value)) retry = Number(value);
  }
  dispatch();
  return events;
}

// Every split point of every fixture would cost seconds per run; these three cover LF and CRLF framing, a
// comment, a data-less block, multi-byte characters and an unterminated stream.
const EVERY_SPLIT_FIXTURES = ["text", "crlf-text", "error-flat"];

describe("createSseDecoder: chunking", () => {
  for (const name of EVERY_SPLIT_FIXTURES) {
    test(`${name}: split at every byte position decodes like the whole stream`, () => {
      const bytes = utf8.encode(loadFixture(name));
      const whole = decodeChunks([bytes]);
      expect(whole.length).toBeGreaterThan(2);
      for (let i = 1; i < bytes.length; i++) {
        const split = decodeChunks([bytes.subarray(0, i), bytes.subarray(i)]);
        if (JSON.stringify(split) !== JSON.stringify(whole)) {
          // Only build the expensive diff for the failing position.
          expect({ splitAt: i, events: split }).toEqual({ splitAt: i, events: whole });
        }
      }
    });
  }

  for (const name of FIXTURE_NAMES) {
    test(`${name}: one byte per chunk, and matches the reference reading`, () => {
      const text = loadFixture(name);
      const bytes = utf8.encode(text);
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i++) chunks.push(bytes.subarray(i, i + 1));
      const expected = referenceDecode(text);
      expect(decodeChunks(chunks)).toEqual(expected);
      expect(decodeAll(text)).toEqual(expected);
    });
  }

  test("events are returned by the push that completes them, not held until end()", () => {
    const d = createSseDecoder();
    expect(d.push("event: a\ndata: 1\n")).toEqual([]);
    expect(d.push("\n")).toEqual([{ event: "a", data: "1" }]);
    expect(d.push("data: 2\n\ndata: 3\n\nda")).toEqual([{ data: "2" }, { data: "3" }]);
    expect(d.push("ta: 4\n\n")).toEqual([{ data: "4" }]);
    expect(d.end()).toEqual([]);
  });

  test("a multi-byte character split across chunks is decoded whole", () => {
    const bytes = utf8.encode("data: café 👋\n\n");
    const e = bytes.indexOf(0xc3);
    const wave = bytes.indexOf(0xf0);
    const events = decodeChunks([bytes.subarray(0, e + 1), bytes.subarray(e + 1, wave + 2), bytes.subarray(wave + 2)]);
    expect(events).toEqual([{ data: "café 👋" }]);
  });

  test("a line that trickles in over many chunks is assembled in order", () => {
    const payload = JSON.stringify({ text: "x".repeat(5000), n: [1, 2, 3] });
    const text = `data: ${payload}\n\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 7) chunks.push(text.slice(i, i + 7));
    expect(decodeChunks(chunks)).toEqual([{ data: payload }]);
  });

  test("bytes and strings can be mixed", () => {
    expect(decodeChunks([utf8.encode("data: a"), "b\n", utf8.encode("\n")])).toEqual([{ data: "ab" }]);
  });

  test("an unfinished character before a string chunk is flushed in place, not carried past the string", () => {
    const head = utf8.encode("data: x\u00e9");
    const events = decodeChunks([head.subarray(0, head.length - 1), "y\n", utf8.encode("\n")]);
    expect(events).toEqual([{ data: "x\uFFFDy" }]);
  });
});

describe("createSseDecoder: line endings", () => {
  test("CRLF", () => {
    expect(decodeAll("event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n")).toEqual([{ event: "x", data: "1" }, { data: "2" }]);
  });

  test("CR only", () => {
    expect(decodeAll("event: x\rdata: 1\rdata: 2\r\rdata: 3\r\r")).toEqual([{ event: "x", data: "1\n2" }, { data: "3" }]);
  });

  test("mixed LF, CR and CRLF in one stream", () => {
    expect(decodeAll("data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\n\n")).toEqual([{ data: "a\nb\nc" }, { data: "d" }]);
  });

  test("CR at the end of one chunk and LF at the start of the next are one line break", () => {
    // Read as two breaks, the LF would be a blank line that dispatches "a" on its own.
    expect(decodeChunks(["data: a\r", "\ndata: b\r", "\n\r", "\n"])).toEqual([{ data: "a\nb" }]);
  });

  test("CR at the end of a chunk followed by a chunk that decodes to nothing yet", () => {
    const tail = utf8.encode("\ndata: é\n\n");
    const firstByteOfE = tail.indexOf(0xc3);
    const events = decodeChunks([
      "data: a\r",
      tail.subarray(0, 0),
      tail.subarray(0, firstByteOfE + 1),
      tail.subarray(firstByteOfE + 1),
    ]);
    expect(events).toEqual([{ data: "a\né" }]);
  });

  test("CR at the end of a chunk followed by a non-LF starts a new line", () => {
    expect(decodeChunks(["data: a\r", "\r"])).toEqual([{ data: "a" }]);
  });
});

describe("createSseDecoder: fields", () => {
  test("comment lines are ignored anywhere", () => {
    expect(decodeAll(": hello\ndata: 1\n: mid-event\ndata: 2\n\n:\n\n")).toEqual([{ data: "1\n2" }]);
  });

  test("multi-line data is joined with LF", () => {
    expect(decodeAll("data: {\ndata:   \"a\": 1\ndata: }\n\n")).toEqual([{ data: '{\n  "a": 1\n}' }]);
  });

  test("only one space after the colon is removed", () => {
    expect(decodeAll("data:x\n\ndata:  x\n\ndata:\tx\n\n")).toEqual([{ data: "x" }, { data: " x" }, { data: "\tx" }]);
  });

  test("an empty data line still dispatches an event with empty data", () => {
    expect(decodeAll("data:\n\ndata\n\n")).toEqual([{ data: "" }, { data: "" }]);
    expect(decodeAll("data\ndata\n\n")).toEqual([{ data: "\n" }]);
  });

  test("a field line without a colon is a field with an empty value", () => {
    expect(decodeAll("event: x\nevent\ndata: 1\n\n")).toEqual([{ data: "1" }]);
  });

  test("only the first colon separates name from value", () => {
    expect(decodeAll('data: {"a":"b:c"}\n\n')).toEqual([{ data: '{"a":"b:c"}' }]);
  });

  test("unknown fields are ignored, and field names are case-sensitive", () => {
    expect(decodeAll("foo: bar\nData: no\ndata: yes\n\n")).toEqual([{ data: "yes" }]);
  });

  test("an event with event: but no data: is not dispatched, and its type does not leak", () => {
    expect(decodeAll("event: response.output_text.delta\n\ndata: 1\n\n")).toEqual([{ data: "1" }]);
  });

  test("a block of only comments or retry is not dispatched", () => {
    expect(decodeAll(": keep-alive\n\nretry: 10\n\n")).toEqual([]);
  });

  test("id persists across events until changed; an empty id clears it; an id with NUL is ignored", () => {
    expect(decodeAll("id: 7\ndata: a\n\ndata: b\n\nid: 8\0\ndata: c\n\nid\ndata: d\n\n")).toEqual([
      { id: "7", data: "a" },
      { id: "7", data: "b" },
      { id: "7", data: "c" },
      { data: "d" },
    ]);
  });

  test("retry is reported only when it is all ASCII digits", () => {
    expect(decodeAll("retry: 1500\ndata: a\n\nretry: 1.5\ndata: b\n\nretry: x1\ndata: c\n\n")).toEqual([
      { retry: 1500, data: "a" },
      { data: "b" },
      { data: "c" },
    ]);
  });
});

describe("createSseDecoder: BOM", () => {
  test("a leading BOM is stripped, as bytes or as a string", () => {
    expect(decodeChunks([utf8.encode("\uFEFFdata: 1\n\n")])).toEqual([{ data: "1" }]);
    expect(decodeAll("\uFEFFdata: 1\n\n")).toEqual([{ data: "1" }]);
  });

  test("a leading BOM split across byte chunks is stripped", () => {
    const bytes = utf8.encode("\uFEFFdata: 1\n\n");
    expect(decodeChunks([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])).toEqual([{ data: "1" }]);
  });

  test("only one BOM is stripped: a second one makes the field name unknown", () => {
    expect(decodeAll("\uFEFF\uFEFFdata: 1\n\n")).toEqual([]);
  });

  test("a BOM later in the stream is data", () => {
    expect(decodeAll("data: 1\n\ndata: \uFEFF2\n\n")).toEqual([{ data: "1" }, { data: "\uFEFF2" }]);
  });
});

describe("createSseDecoder: end()", () => {
  test("a final event with data but no blank line is dispatched", () => {
    expect(decodeAll("data: 1\n\nevent: last\ndata: 2\n")).toEqual([{ data: "1" }, { event: "last", data: "2" }]);
  });

  test("a final line without any line ending is still read", () => {
    expect(decodeAll("data: [DONE]")).toEqual([{ data: "[DONE]" }]);
  });

  test("a final block without data is not dispatched", () => {
    expect(decodeAll("data: 1\n\nevent: x\n")).toEqual([{ data: "1" }]);
  });

  test("an unfinished UTF-8 sequence at the end becomes U+FFFD rather than vanishing", () => {
    const bytes = utf8.encode("data: é");
    expect(decodeChunks([bytes.subarray(0, bytes.length - 1)])).toEqual([{ data: "\uFFFD" }]);
  });

  test("the decoder can be reused after end()", () => {
    const d = createSseDecoder();
    d.push("id: 1\ndata: a");
    expect(d.end()).toEqual([{ id: "1", data: "a" }]);
    expect(d.push("\uFEFFdata: b\n\n")).toEqual([{ data: "b" }]);
  });
});

describe("createSseDecoder: the bound on one event", () => {
  const LIMIT = 1000;

  test("events up to the bound pass, however they are chunked", () => {
    const d = createSseDecoder(LIMIT);
    // The bound is on what is buffered: a line with its field name ("data: "), and the event's data.
    const data = "x".repeat(LIMIT - "data: ".length);
    const frame = `data: ${data}\n\n`;
    const events: SseEvent[] = [];
    for (let i = 0; i < frame.length; i += 7) events.push(...d.push(frame.slice(i, i + 7)));
    expect(events).toEqual([{ data }]);
    expect(d.push(`data: ${"y".repeat(LIMIT - 7)}\ndata: \n\n`)).toEqual([{ data: "y".repeat(LIMIT - 7) + "\n" }]);
  });

  test("a line that grows past the bound over many chunks throws, before the line is ever joined", () => {
    const d = createSseDecoder(LIMIT);
    d.push("data: ");
    let thrown: unknown = null;
    let pushed = 0;
    try {
      for (; pushed < 100; pushed++) d.push("x".repeat(100));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SseEventTooLargeError);
    expect((thrown as Error).message).toContain(String(LIMIT));
    // Refused as soon as the line passed the bound: nothing more was buffered.
    expect(pushed).toBe(9);
  });

  test("a line past the bound in one chunk, or ended by the chunk that crosses it, throws", () => {
    expect(() => createSseDecoder(LIMIT).push(`data: ${"x".repeat(LIMIT + 1)}\n\n`)).toThrow(SseEventTooLargeError);
    const d = createSseDecoder(LIMIT);
    d.push("data: " + "x".repeat(LIMIT - 10));
    expect(() => d.push("x".repeat(20) + "\n\n")).toThrow(SseEventTooLargeError);
  });

  test("an event of many short data lines that add up past the bound throws", () => {
    const d = createSseDecoder(LIMIT);
    expect(() => {
      for (let i = 0; i < 100; i++) d.push(`data: ${"x".repeat(50)}\n`);
    }).toThrow(SseEventTooLargeError);
  });

  test("the bound is per event: many events that add up past it pass", () => {
    const d = createSseDecoder(LIMIT);
    let count = 0;
    for (let i = 0; i < 100; i++) count += d.push(`data: ${"x".repeat(500)}\n\n`).length;
    expect(count).toBe(100);
  });
});

describe("parseStreamEvent", () => {
  test("[DONE] is done, with or without surrounding whitespace", () => {
    expect(parseStreamEvent({ data: "[DONE]" })).toBe("done");
    expect(parseStreamEvent({ data: " [DONE] " })).toBe("done");
  });

  test("a typed payload is returned as is", () => {
    const payload = { type: "response.output_text.delta", sequence_number: 4, delta: "Hi", output_index: 0 };
    expect(parseStreamEvent({ event: "other", data: JSON.stringify(payload) })).toEqual(payload);
  });

  test("a payload without type takes the SSE event name", () => {
    expect(parseStreamEvent({ event: "codex.rate_limits", data: '{"primary":{"used_percent":12}}' })).toEqual({
      type: "codex.rate_limits",
      primary: { used_percent: 12 },
    });
  });

  test("a payload without type but with an error is an error event, whatever the event name", () => {
    const error = { message: "boom", code: "server_error" };
    expect(parseStreamEvent({ data: JSON.stringify({ error }) })).toEqual({ type: "error", error });
    expect(parseStreamEvent({ event: "message", data: JSON.stringify({ error }) })).toEqual({ type: "error", error });
  });

  test("error: null does not make a payload an error", () => {
    expect(parseStreamEvent({ event: "x", data: '{"error":null}' })).toEqual({ type: "x", error: null });
  });

  test("malformed JSON throws StreamProtocolError naming the event", () => {
    let caught: unknown;
    try {
      parseStreamEvent({ event: "response.output_text.delta", data: '{"type":"response.output_text.delta",' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StreamProtocolError);
    expect(caught).toBeInstanceOf(Error);
    expect((caught as Error).name).toBe("StreamProtocolError");
    expect((caught as Error).message).toContain("response.output_text.delta");
  });

  test("JSON that is not an object, or an untyped object without event name, is a protocol error", () => {
    for (const data of ["[1,2]", "42", "null", '"text"', "{}"]) {
      expect(() => parseStreamEvent({ data })).toThrow(StreamProtocolError);
    }
  });

  test("every fixture event parses to an object whose type is its SSE event name", () => {
    for (const name of FIXTURE_NAMES) {
      for (const e of decodeAll(loadFixture(name))) {
        const parsed = parseStreamEvent(e);
        if (parsed === "done") continue;
        expect(parsed.type).toBe(e.event!);
        expect(typeof parsed.sequence_number).toBe("number");
      }
    }
  });
});
