/**
 * The site's documents behind a real caching proxy (squid from Debian, tests/support/squid.ts): HEAD
 * revalidations must not teach the cache an empty document, and a changed document reaches the next client.
 * Before the fix a HEAD answered with 304 and `Content-Length: 0`, squid stored that zero, and every later client
 * got an empty 200 until the document changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";
import { squidUnavailable, startSquid, type Squid } from "../support/squid";

const DOCUMENTS = ["/api/v1/latest", "/update/latest.json", "/api/v1/announcements"];
const unavailable = squidUnavailable();

let g: Gantry;
let squid: Squid;

async function publish(version: string): Promise<void> {
  const body = { version, assets: [{ name: `web-${version}.zip`, url: `https://example.com/web-${version}.zip` }] };
  expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
}

async function announce(title: string): Promise<void> {
  const res = await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify({ title, body: `about ${title}` }) });
  expect(res.status).toBe(201);
}

/** curl through squid: status, headers and body as the command-line client sees them. */
async function curl(url: string, ...args: string[]): Promise<{ status: number; headers: string; body: string }> {
  const proc = Bun.spawn(["curl", "-sS", "-D", "-", ...args, url], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  const split = out.indexOf("\r\n\r\n");
  const headers = out.slice(0, split);
  return { status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(headers)![1]), headers, body: out.slice(split + 4) };
}

if (unavailable) {
  test.skip(`site documents behind squid: ${unavailable}`, () => {});
} else {
  beforeAll(async () => {
    g = await startGantry();
    await publish("1.0.0");
    await announce("first");
    squid = await startSquid(g.url);
  }, 60_000);

  afterAll(async () => {
    await squid?.stop();
    await g?.stop();
  });

  describe("documents through squid", () => {
    for (const path of DOCUMENTS) {
      test(`${path}: a HEAD revalidation never leaves an empty document in the cache`, async () => {
        // The cache gets the document (its links name squid's address), then a client revalidates it with HEAD.
        const first = await fetch(`${squid.url}${path}`);
        const direct = await first.text();
        expect(direct.length).toBeGreaterThan(50);
        expect(JSON.parse(direct)).toBeObject();
        const etag = first.headers.get("etag")!;
        const head = await curl(`${squid.url}${path}`, "-I", "-H", `If-None-Match: ${etag}`);
        expect([200, 304]).toContain(head.status);
        expect(head.headers).not.toMatch(/^content-length: 0\r?$/im);
        // Every later client gets the whole document: curl and fetch, plain and conditional on another tag.
        const viaCurl = await curl(`${squid.url}${path}`);
        expect(viaCurl.status).toBe(200);
        expect(viaCurl.body).toBe(direct);
        expect(await (await fetch(`${squid.url}${path}`)).text()).toBe(direct);
        const other = await fetch(`${squid.url}${path}`, { headers: { "if-none-match": '"0000"' } });
        expect(other.status).toBe(200);
        expect(await other.text()).toBe(direct);
      });
    }

    test("after a publish and a new announcement, the next GET through squid has the new documents", async () => {
      // Warm the cache and revalidate with HEAD, as above.
      for (const path of DOCUMENTS) {
        const etag = (await fetch(`${squid.url}${path}`)).headers.get("etag")!;
        await curl(`${squid.url}${path}`, "-I", "-H", `If-None-Match: ${etag}`);
      }
      await publish("1.1.0");
      await announce("second");
      const latest = JSON.parse((await curl(`${squid.url}/api/v1/latest`)).body);
      expect(latest.version).toBe("1.1.0");
      const manifest = (await (await fetch(`${squid.url}/update/latest.json`)).json()) as { version: string };
      expect(manifest.version).toBe("1.1.0");
      const anns = JSON.parse((await curl(`${squid.url}/api/v1/announcements`)).body);
      expect(anns.announcements.map((a: { title: string }) => a.title).sort()).toEqual(["first", "second"]);
    });
  });
}
