/**
 * The public documents served from Bun's route table (http/native-routes.ts) keep what every route gets through
 * Elysia: the request's log line and metric, errors rendered as the app renders them (with the site's CORS
 * headers), methods and spellings of the path that the table does not serve answered by the app as before, and
 * the same reply as the app's own route (one definition of each document).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";
import { createApp } from "../../src/app";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry({ captureLogs: true });
});
afterAll(async () => {
  await g.stop();
});

const requestLines = (route: string) => g.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request" && l.route === route);

async function counted(series: string): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe("site documents on the native route table", () => {
  test("each request is logged (caller's id, status, duration) and counted by route template, HEAD and 304 included", async () => {
    const before = requestLines("/api/v1/latest").length;
    const ok = await fetch(`${g.url}/api/v1/latest`, { headers: { "x-request-id": "native-1" } });
    expect(ok.status).toBe(200);
    const etag = ok.headers.get("etag")!;
    await ok.text();
    const head = await fetch(`${g.url}/api/v1/latest`, { method: "HEAD", headers: { "if-none-match": etag } });
    expect(head.status).toBe(304);
    expect(head.headers.get("content-length")).toBeNull();
    const lines = requestLines("/api/v1/latest").slice(before);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: "info", requestId: "native-1", method: "GET", status: 200 });
    expect(lines[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(lines[1]).toMatchObject({ method: "HEAD", status: 304 });
    expect(lines[1].requestId).toMatch(/^req_/);
    expect(await counted('gantry_http_requests_total{route="/api/v1/latest",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(await counted('gantry_http_requests_total{route="/api/v1/latest",method="HEAD",status="304"}')).toBe(1);
  });

  test("a refused query is the app's error envelope with the CORS headers, logged and counted with its status", async () => {
    for (const query of ["platform=bogus", "platform=windows&platform=linux"]) {
      const res = await fetch(`${g.url}/api/v1/latest?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect((await res.json()).error).toMatchObject({ code: "invalid_request", param: "platform" });
    }
    const announcements = await fetch(`${g.url}/api/v1/announcements?version=not-a-version`);
    expect(announcements.status).toBe(400);
    expect(announcements.headers.get("access-control-allow-origin")).toBe("*");
    expect(requestLines("/api/v1/latest").filter((l) => l.status === 400)).toHaveLength(2);
    expect(await counted('gantry_http_requests_total{route="/api/v1/latest",method="GET",status="400"}')).toBe(2);
    expect(await counted('gantry_http_requests_total{route="/api/v1/announcements",method="GET",status="400"}')).toBe(1);
  });

  test("other methods and spellings go to the app: 405 with Allow, the preflight, the same document with a trailing slash", async () => {
    const post = await fetch(`${g.url}/api/v1/latest`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("GET");
    const preflight = await fetch(`${g.url}/update/latest.json`, { method: "OPTIONS", headers: { origin: "https://a.example" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
    const a = await fetch(`${g.url}/api/v1/latest`);
    const b = await fetch(`${g.url}/api/v1/latest/`);
    expect(b.status).toBe(200);
    expect(b.headers.get("etag")).toBe(a.headers.get("etag"));
    expect(await b.text()).toBe(await a.text());
  });

  test("the app's own route (app.handle, without the native table) gives the same replies", async () => {
    const app = createApp(g.deps);
    for (const path of ["/api/v1/latest", "/api/v1/latest?platform=windows", "/api/v1/announcements?surface=home", "/update/latest.json", "/api/v1/latest?arch=x&arch=y"]) {
      const headers = { host: new URL(g.url).host };
      const viaApp = await app.handle(new Request(`${g.url}${path}`, { headers }));
      const native = await fetch(`${g.url}${path}`);
      expect({ path, status: viaApp.status }).toEqual({ path, status: native.status });
      expect(viaApp.headers.get("etag")).toBe(native.headers.get("etag"));
      expect(viaApp.headers.get("access-control-allow-origin")).toBe(native.headers.get("access-control-allow-origin"));
      expect(await viaApp.text()).toBe(await native.text());
    }
  });
});
