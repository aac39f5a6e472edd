/**
 * CORS on the public site API (/api/v1/*, /update/latest.json): the heartbeat's preflight, Allow-Origin on the
 * documents and on errors, GANTRY_CORS_ORIGINS restricting it (echo with Vary: Origin), none on admin or gateway.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

const PAGE = "https://app.example.com";

function preflight(url: string, origin = PAGE): Promise<Response> {
  return fetch(url, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-app-client-id" },
  });
}

describe("every origin (the default)", () => {
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry();
    const body = { version: "1.0.0", assets: [{ name: "web-1.0.0.zip", url: "https://example.com/web-1.0.0.zip" }] };
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
  });
  afterAll(() => g.stop());

  test("the heartbeat's preflight is a 204 allowing POST with content-type and x-app-client-id", async () => {
    const res = await preflight(`${g.url}/api/v1/client/heartbeat`);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")!.split(/,\s*/)).toContain("POST");
    const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["content-type", "x-app-client-id"]));
    expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    // And the heartbeat itself, as a page sends it.
    const beat = await fetch(`${g.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { origin: PAGE, "content-type": "application/json", "x-app-client-id": "web-1" },
      body: JSON.stringify({ version: "1.0.0" }),
    });
    expect(beat.status).toBe(200);
    expect(beat.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("the documents carry Access-Control-Allow-Origin: * (with or without Origin: shared caches hand them to anyone)", async () => {
    for (const path of ["/api/v1/latest", "/update/latest.json", "/api/v1/announcements"]) {
      for (const headers of [{ origin: PAGE }, {}] as Array<Record<string, string>>) {
        const res = await fetch(`${g.url}${path}`, { headers });
        expect({ path, status: res.status, acao: res.headers.get("access-control-allow-origin") }).toEqual({ path, status: 200, acao: "*" });
        expect(res.headers.get("access-control-expose-headers")!.toLowerCase()).toContain("etag");
        const etag = res.headers.get("etag")!;
        const again = await fetch(`${g.url}${path}`, { headers: { ...headers, "if-none-match": etag } });
        expect(again.status).toBe(304);
        expect(again.headers.get("access-control-allow-origin")).toBe("*");
      }
      expect((await preflight(`${g.url}${path}`)).status).toBe(204);
    }
  });

  test("errors of the site API carry it too, so a page can read them", async () => {
    for (const [method, path] of [["GET", "/api/v1/latest?platform=amiga"], ["POST", "/api/v1/client/heartbeat"], ["GET", "/api/v1/download/999"]]) {
      const res = await fetch(`${g.url}${path}`, { method, headers: { origin: PAGE } });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect({ path, acao: res.headers.get("access-control-allow-origin") }).toEqual({ path, acao: "*" });
    }
  });

  test("the download redirect carries it too, so a page can follow it", async () => {
    const id = (await (await fetch(`${g.url}/api/v1/latest`)).json()).assets[0].id;
    const res = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual", headers: { origin: PAGE } });
    expect(res.status).toBe(302);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("admin and gateway routes get no CORS headers (unchanged)", async () => {
    for (const path of ["/admin/api/keys", "/v1/models", "/healthz"]) {
      const res = await fetch(`${g.url}${path}`, { headers: { origin: PAGE } });
      expect({ path, acao: res.headers.get("access-control-allow-origin") }).toEqual({ path, acao: null });
      const pre = await preflight(`${g.url}${path}`);
      expect({ path, acao: pre.headers.get("access-control-allow-origin") }).toEqual({ path, acao: null });
    }
  });
});

describe("GANTRY_CORS_ORIGINS set", () => {
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry({ config: { corsOrigins: [PAGE, "http://localhost:5173"] } });
  });
  afterAll(() => g.stop());

  test("a listed origin is echoed with Vary: Origin; another gets no Allow-Origin", async () => {
    for (const origin of [PAGE, "http://localhost:5173"]) {
      const res = await fetch(`${g.url}/api/v1/latest`, { headers: { origin } });
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("vary")).toContain("Origin");
      const pre = await preflight(`${g.url}/api/v1/client/heartbeat`, origin);
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe(origin);
      expect(pre.headers.get("access-control-allow-headers")).toContain("x-app-client-id");
    }
    for (const headers of [{ origin: "https://evil.example" }, {}] as Array<Record<string, string>>) {
      const res = await fetch(`${g.url}/api/v1/latest`, { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("vary")).toContain("Origin");
    }
    const refused = await preflight(`${g.url}/api/v1/client/heartbeat`, "https://evil.example");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(refused.headers.get("access-control-allow-methods")).toBeNull();
  });
});
