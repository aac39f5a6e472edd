import { describe, expect, test } from "bun:test";
import { documentEtag, documentReply, ifNoneMatchHits, revalidatedJson } from "../../src/site/http/revalidation";
import { keepCors } from "../../src/site/http/cors";

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

describe("documentReply: headers made once per document, never shared between replies", () => {
  const doc = { body: '{"v":1}', etag: documentEtag('{"v":1}') };
  const cors = { "access-control-allow-origin": "*" };
  const request = (headers: Record<string, string> = {}) => {
    const r = new Request("http://x/", { headers });
    keepCors(r, cors);
    return r;
  };

  test("200 with validators, CORS and content type; 304 without a body or content type; 412 on a stale If-Match", async () => {
    const ok = documentReply(request(), doc);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe(doc.body);
    expect(ok.headers.get("etag")).toBe(doc.etag);
    expect(ok.headers.get("cache-control")).toBe("no-cache");
    expect(ok.headers.get("content-type")).toBe("application/json");
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    expect(ok.headers.get("date")).toMatch(/GMT$/);
    const same = documentReply(request({ "if-none-match": `W/${doc.etag}` }), doc);
    expect(same.status).toBe(304);
    expect(await same.text()).toBe("");
    expect(same.headers.get("content-type")).toBeNull();
    expect(same.headers.get("etag")).toBe(doc.etag);
    const stale = documentReply(request({ "if-match": '"other"' }), doc, "X-App-Client-ID");
    expect(stale.status).toBe(412);
    expect(stale.headers.get("vary")).toBe("X-App-Client-ID");
    expect(stale.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a header added to one reply does not reach the next (the kept headers are copied into each)", () => {
    const first = documentReply(request(), doc);
    first.headers.set("strict-transport-security", "max-age=1");
    first.headers.append("vary", "Origin");
    const next = documentReply(request(), doc);
    expect(next.headers.get("strict-transport-security")).toBeNull();
    expect(next.headers.get("vary")).toBeNull();
  });

  test("Vary and the CORS choice are part of what is kept", () => {
    expect(documentReply(request(), doc, "X-App-Client-ID").headers.get("vary")).toBe("X-App-Client-ID");
    expect(documentReply(request(), doc).headers.get("vary")).toBeNull();
    const listed = new Request("http://x/");
    keepCors(listed, { "access-control-allow-origin": "https://a.example", vary: "Origin" });
    const res = documentReply(listed, doc, "X-App-Client-ID");
    expect(res.headers.get("access-control-allow-origin")).toBe("https://a.example");
    expect(res.headers.get("vary")).toBe("Origin, X-App-Client-ID");
    expect(documentReply(request(), doc).headers.get("access-control-allow-origin")).toBe("*");
  });
});
