import { describe, expect, test } from "bun:test";
import { multipartByteranges } from "../../src/site/downloads/download-multipart";

const data = new TextEncoder().encode("0123456789abcdefghijklmnopqrstuvwxyz");
const blob = new Blob([data]);

describe("multipartByteranges", () => {
  test("framing, part headers and an exact length", async () => {
    const m = multipartByteranges([{ start: 0, end: 3 }, { start: 30, end: 35 }], data.length, "application/zip", (r) => blob.slice(r.start, r.end + 1).stream());
    const boundary = /boundary=(\S+)$/.exec(m.contentType)![1];
    const text = await new Response(m.body).text();
    expect(text.length).toBe(m.contentLength);
    expect(text).toBe(
      `\r\n--${boundary}\r\nContent-Type: application/zip\r\nContent-Range: bytes 0-3/36\r\n\r\n0123` +
        `\r\n--${boundary}\r\nContent-Type: application/zip\r\nContent-Range: bytes 30-35/36\r\n\r\nuvwxyz` +
        `\r\n--${boundary}--\r\n`,
    );
  });

  test("parts are opened only when the reader gets there", async () => {
    const opened: number[] = [];
    const m = multipartByteranges([{ start: 0, end: 0 }, { start: 5, end: 5 }], data.length, "x", (r) => {
      opened.push(r.start);
      return blob.slice(r.start, r.end + 1).stream();
    });
    const reader = m.body.getReader();
    await reader.read();
    expect(opened).toEqual([]);
    await reader.read();
    expect(opened).toEqual([0]);
    await reader.cancel();
  });

  test("a short part fails the body instead of shifting later bytes", async () => {
    const m = multipartByteranges([{ start: 0, end: 9 }], data.length, "x", () => blob.slice(0, 3).stream());
    await expect(new Response(m.body).text()).rejects.toThrow();
  });
});
