import { describe, expect, test } from "bun:test";
import { documentEtag, ifNoneMatchHits, revalidatedJson } from "../../src/site/revalidation";

describe("document revalidation", () => {
  test("strong ETag over the exact body", () => {
    const a = documentEtag('{"v":1}');
    expect(a).toMatch(/^"[0-9a-f]{32}"$/);
    expect(documentEtag('{"v":1}')).toBe(a);
    expect(documentEtag('{"v":2}')).not.toBe(a);
  });

  test("If-None-Match compares weakly and understands lists and *", () => {
    const tag = documentEtag("x");
    expect(ifNoneMatchHits(tag, tag)).toBe(true);
    expect(ifNoneMatchHits(`W/${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits(`"nope", W/${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits("*", tag)).toBe(true);
    expect(ifNoneMatchHits(`"nope"`, tag)).toBe(false);
    expect(ifNoneMatchHits(tag.slice(1, -1), tag)).toBe(false);
    expect(ifNoneMatchHits(null, tag)).toBe(false);
    expect(ifNoneMatchHits("", tag)).toBe(false);
  });

  test("revalidatedJson: 200 with validators, 304 without a body", async () => {
    const first = revalidatedJson(new Request("http://x/"), { a: 1 });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-cache");
    const etag = first.headers.get("etag")!;
    expect(await first.json()).toEqual({ a: 1 });
    const again = revalidatedJson(new Request("http://x/", { headers: { "if-none-match": `W/${etag}` } }), { a: 1 });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    const changed = revalidatedJson(new Request("http://x/", { headers: { "if-none-match": etag } }), { a: 2 });
    expect(changed.status).toBe(200);
  });
});

describe("ifNoneMatchHits: RFC 9110 lists, compared weakly", () => {
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
