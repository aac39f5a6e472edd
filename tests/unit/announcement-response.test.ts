import { describe, expect, test } from "bun:test";
import { etagOf, ifNoneMatchHits, revalidatedJson } from "../../src/site/announcement-response.ts";

describe("etagOf", () => {
  test("strong, quoted, stable for the same body, different for another", () => {
    const a = etagOf('{"a":1}');
    expect(a).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(etagOf('{"a":1}')).toBe(a);
    expect(etagOf('{"a":2}')).not.toBe(a);
  });
});

describe("ifNoneMatchHits (weak comparison)", () => {
  const tag = '"abc"';
  const cases: Array<[string | null, boolean]> = [
    [null, false],
    ['"abc"', true],
    ['W/"abc"', true],
    [' W/"abc" ', true],
    ['"x", W/"abc"', true],
    ['"x","y"', false],
    ['"abcd"', false],
    ["abc", false],
    ["*", true],
    ["", false],
  ];
  for (const [header, want] of cases) test(`${JSON.stringify(header)} -> ${want}`, () => expect(ifNoneMatchHits(header, tag)).toBe(want));
});

describe("revalidatedJson", () => {
  test("200 with no-cache and an ETag over the exact body", async () => {
    const res = revalidatedJson(new Request("http://x/"), { b: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const text = await res.text();
    expect(res.headers.get("etag")).toBe(etagOf(text));
  });
  test("304 without a body when the tag matches, same validators", async () => {
    const etag = etagOf(JSON.stringify({ b: 1 }));
    const res = revalidatedJson(new Request("http://x/", { headers: { "if-none-match": `W/${etag}` } }), { b: 1 });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe(etag);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(await res.text()).toBe("");
  });
});
