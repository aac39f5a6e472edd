/** GET / : the first page a browser sees points to the back office, the portal and the docs, not a JSON 404. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { landingPage } from "../../src/http/landing";
import { SECURITY_HEADERS } from "../../src/http/security-headers";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry();
});
afterAll(() => g.stop());

describe("GET /", () => {
  test("an HTML page with the security headers of the other pages", async () => {
    const res = await fetch(`${g.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(res.headers.get(name)).toBe(value);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const html = await res.text();
    expect(html).toStartWith("<!doctype html>");
    // Strict CSP: no script at all, no inline style, nothing from another origin.
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  test("links to the back office, the portal and the API docs, and names the gateway endpoints", async () => {
    const html = await (await fetch(`${g.url}/`)).text();
    for (const href of ["/admin", "/portal", "/docs", "/openapi.json"]) expect(html).toContain(`href="${href}"`);
    for (const path of ["/v1/responses", "/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/api/v1/latest", "/api/v1/announcements"]) {
      expect(html).toContain(`<code>${path}</code>`);
    }
    // The SDK base URL is this server's own address.
    expect(html).toContain(`<code>${g.url}/v1</code>`);
  });

  test("every link and the stylesheet lead somewhere (a page, or the sign-in redirect)", async () => {
    const html = await (await fetch(`${g.url}/`)).text();
    const hrefs = [...html.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]);
    expect(hrefs).toContain("/docs/assets/app.css");
    for (const href of new Set(hrefs)) {
      const res = await fetch(`${g.url}${href}`, { redirect: "manual" });
      expect({ href, status: res.status }).toEqual({ href, status: href === "/admin" ? 303 : 200 });
      await res.arrayBuffer();
    }
  });

  test("HEAD answers like GET without a body; other methods get 405 with Allow", async () => {
    const head = await fetch(`${g.url}/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(head.headers.get("content-security-policy")).toBe(SECURITY_HEADERS["content-security-policy"]);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const post = await fetch(`${g.url}/`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("GET");
    expect((await post.json()).error.code).toBeString();
  });

  test("not part of the public API document", async () => {
    const doc = await (await fetch(`${g.url}/openapi.json`)).json();
    expect(Object.keys(doc.paths)).not.toContain("/");
  });
});

describe("landingPage", () => {
  test("the base URL is escaped", () => {
    const html = landingPage(`https://x"><img src=y>`);
    expect(html).not.toContain(`"><img`);
    expect(html).toContain("https://x&quot;&gt;&lt;img src=y&gt;/v1");
  });
});

test("with GANTRY_PUBLIC_URL the page shows the public address", async () => {
  const pub = await startGantry({ config: { publicUrl: "https://gateway.example.com" } });
  try {
    expect(await (await fetch(`${pub.url}/`)).text()).toContain("<code>https://gateway.example.com/v1</code>");
  } finally {
    await pub.stop();
  }
});
