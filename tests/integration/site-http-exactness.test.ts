/**
 * HTTP details of the site API (issue 19): HEAD replies (304 without a zero length, Date), If-Match on the
 * documents, If-None-Match on /dl/ (a 304 spends no link and counts no download), and one rule for repeated
 * query parameters on every site route.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

const DOCUMENTS = ["/api/v1/latest", "/update/latest.json", "/api/v1/announcements"];
const data = crypto.getRandomValues(new Uint8Array(50_000));
const sha256 = new Bun.CryptoHasher("sha256").update(data).digest("hex");

let g: Gantry;
let assetId: number;

beforeAll(async () => {
  g = await startGantry();
  await g.deps.releases.catalog.create("1.0.0", {}, true);
  assetId = (await g.deps.releases.catalog.upload("1.0.0", "web-1.0.0.zip", new Blob([data]).stream(), data.length)).id;
  expect((await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify({ title: "t", body: "b" }) })).status).toBe(201);
});
afterAll(() => g.stop());

async function link(): Promise<string> {
  const res = await fetch(`${g.url}/api/v1/download/${assetId}`, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}

async function downloads(): Promise<number> {
  const r = (await (await g.admin("/admin/api/releases/1.0.0")).json()) as { assets: Array<{ id: number; downloads: number }> };
  return r.assets.find((a) => a.id === assetId)!.downloads;
}

describe("HEAD", () => {
  for (const path of DOCUMENTS) {
    test(`${path}: a matching HEAD is a 304 without Content-Length: 0, and HEAD replies carry Date`, async () => {
      const got = await fetch(`${g.url}${path}`);
      const length = (await got.text()).length;
      const etag = got.headers.get("etag")!;
      const head = await fetch(`${g.url}${path}`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(length));
      expect(Number.isNaN(Date.parse(head.headers.get("date") ?? ""))).toBe(false);
      const revalidated = await fetch(`${g.url}${path}`, { method: "HEAD", headers: { "if-none-match": etag } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.headers.get("etag")).toBe(etag);
      // No length, or the 200's: never a zero that a cache would store as the document's.
      expect([null, String(length)]).toContain(revalidated.headers.get("content-length"));
      expect(revalidated.headers.get("date")).not.toBeNull();
    });
  }

  test("a HEAD of a /dl/ link carries Date", async () => {
    const head = await fetch(await link(), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("date")).not.toBeNull();
  });
});

describe("If-Match on the documents", () => {
  for (const path of DOCUMENTS) {
    test(`${path}: 412 with the envelope unless it names the current tag`, async () => {
      const etag = (await fetch(`${g.url}${path}`)).headers.get("etag")!;
      const stale = await fetch(`${g.url}${path}`, { headers: { "if-match": '"0123456789abcdef"' } });
      expect(stale.status).toBe(412);
      expect(stale.headers.get("etag")).toBe(etag);
      expect(((await stale.json()) as any).error).toMatchObject({ code: "precondition_failed", param: "If-Match" });
      for (const ok of [etag, "*", `"x", ${etag}`]) {
        expect((await fetch(`${g.url}${path}`, { headers: { "if-match": ok } })).status).toBe(200);
      }
    });
  }
});

describe("If-None-Match on /dl/", () => {
  test("the SHA-256 ETag answers 304 (GET and HEAD) without spending the link or counting a download", async () => {
    const url = await link();
    const before = await downloads();
    const etag = `"sha256-${sha256}"`;
    for (const method of ["GET", "HEAD", "GET"]) {
      for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
        const res = await fetch(url, { method, headers: { "if-none-match": tag } });
        expect(res.status).toBe(304);
        expect(res.headers.get("etag")).toBe(etag);
        expect(await res.text()).toBe("");
      }
    }
    // Another tag is no match: the whole file, and the same link still works for it.
    const full = await fetch(url, { headers: { "if-none-match": '"sha256-00"' } });
    expect(full.status).toBe(200);
    expect(new Uint8Array(await full.arrayBuffer())).toEqual(data);
    expect(await downloads()).toBe(before + 1);
  });
});

describe("repeated query parameters", () => {
  const urls = () => [
    "/api/v1/latest?platform=web&platform=windows",
    "/api/v1/latest?arch=x64&arch=x64",
    "/update/latest.json?platform=web&platform=web",
    "/api/v1/announcements?locale=en&locale=de",
    `/api/v1/download/${assetId}?platform=web&platform=web`,
    "/api/v1/client/heartbeat?platform=a&platform=b",
  ];
  test("are a 400 naming the parameter on every site route", async () => {
    for (const path of urls()) {
      const method = path.includes("heartbeat") ? "POST" : "GET";
      const res = await fetch(`${g.url}${path}`, {
        method,
        redirect: "manual",
        headers: { "content-type": "application/json", "x-app-client-id": "c1" },
        body: method === "POST" ? "{}" : undefined,
      });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      const name = /\?(\w+)=/.exec(path)![1];
      expect(((await res.json()) as any).error).toMatchObject({ code: "invalid_request", param: name });
    }
    const dl = new URL(await link());
    const res = await fetch(`${dl.href}?x=1&x=2`);
    expect(res.status).toBe(400);
    // The link was not spent by the refused request.
    expect((await fetch(dl.href)).status).toBe(200);
  });

  test("a parameter given once, or different parameters, are fine", async () => {
    expect((await fetch(`${g.url}/api/v1/latest?platform=web&arch=universal`)).status).toBe(200);
    expect((await fetch(`${g.url}/api/v1/announcements?locale=en&version=1.0.0`)).status).toBe(200);
  });
});
