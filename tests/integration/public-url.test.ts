/** The base of generated links over real HTTP: Host, X-Forwarded-* from untrusted and trusted peers, GANTRY_PUBLIC_URL. */
import { afterEach, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry | null = null;
afterEach(async () => {
  await g?.stop();
  g = null;
});

async function withOneAsset(config: Parameters<typeof startGantry>[0] = {}): Promise<{ g: Gantry; id: number }> {
  g = await startGantry(config);
  const release = await g.deps.releases.catalog.create("1.0.0", {}, true);
  const asset = await g.deps.releases.catalog.upload(release.version, "Gantry-1.0.0-x64-setup.exe", new Blob(["bytes"]).stream(), 5);
  return { g, id: asset.id };
}

async function base(g: Gantry, headers: Record<string, string>): Promise<{ download: string; heartbeat: string }> {
  const doc = await (await fetch(`${g.url}/api/v1/latest`, { headers })).json();
  return { download: doc.assets[0].downloadUrl, heartbeat: doc.heartbeat.url };
}

describe("base URL of generated links", () => {
  test("a real domain gets https, loopback names keep http", async () => {
    const { g, id } = await withOneAsset();
    expect((await base(g, { host: "updates.example.com" })).download).toBe(`https://updates.example.com/api/v1/download/${id}`);
    expect((await base(g, { host: "updates.example.com:8443" })).heartbeat).toBe("https://updates.example.com:8443/api/v1/client/heartbeat");
    expect((await base(g, {})).download).toBe(`${g.url}/api/v1/download/${id}`);
    expect(g.url.startsWith("http://127.0.0.1:")).toBe(true);
    expect((await base(g, { host: "localhost:9000" })).download).toBe(`http://localhost:9000/api/v1/download/${id}`);
    expect((await base(g, { host: "[::1]:9000" })).download).toBe(`http://[::1]:9000/api/v1/download/${id}`);
    // Decision: an IP literal keeps the scheme the request came in with.
    expect((await base(g, { host: "192.168.1.20:8080" })).download).toBe(`http://192.168.1.20:8080/api/v1/download/${id}`);
  });

  test("X-Forwarded-* from an untrusted peer are ignored", async () => {
    const { g, id } = await withOneAsset({ config: { trustedProxies: ["10.0.0.0/8"] } });
    const b = await base(g, { host: "updates.example.com", "x-forwarded-host": "evil.example.net", "x-forwarded-proto": "http" });
    expect(b.download).toBe(`https://updates.example.com/api/v1/download/${id}`);
  });

  test("X-Forwarded-* from a trusted proxy are honoured, for documents and redirects", async () => {
    const { g, id } = await withOneAsset({ config: { trustedProxies: ["127.0.0.1"] } });
    const headers = { "x-forwarded-host": "cdn.example.com", "x-forwarded-proto": "https" };
    expect((await base(g, headers)).download).toBe(`https://cdn.example.com/api/v1/download/${id}`);
    expect((await base(g, { host: "updates.example.com", "x-forwarded-proto": "http" })).download).toBe(`http://updates.example.com/api/v1/download/${id}`);
    const redirect = await fetch(`${g.url}/api/v1/download/${id}`, { headers, redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toMatch(/^https:\/\/cdn\.example\.com\/dl\/[A-Za-z0-9_-]{108}$/);
    const legacy = await fetch(`${g.url}/update/latest.json`, { headers });
    expect(legacy.status).toBe(404);
  });

  test("GANTRY_PUBLIC_URL wins, path prefix included", async () => {
    const { g, id } = await withOneAsset({ config: { publicUrl: "https://dl.example.org/updates", trustedProxies: ["127.0.0.1"] } });
    const b = await base(g, { host: "localhost", "x-forwarded-host": "cdn.example.com" });
    expect(b.download).toBe(`https://dl.example.org/updates/api/v1/download/${id}`);
    const redirect = await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" });
    expect(redirect.headers.get("location")).toMatch(/^https:\/\/dl\.example\.org\/updates\/dl\/[A-Za-z0-9_-]{108}$/);
  });
});
