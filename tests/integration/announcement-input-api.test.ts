/**
 * /admin/api/announcements and `gantry announcements` on the two input rules an operator meets first: which CTA
 * links are accepted, and that a time needs a zone. A refusal is a 400 with the envelope and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry();
});
afterAll(() => g.stop());

async function send(method: string, path: string, body: unknown) {
  const res = await g.admin(path, { method, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function expectRefused(method: string, path: string, body: unknown, param: string, message: RegExp) {
  const before = JSON.stringify((await send("GET", "/admin/api/announcements", undefined)).body.data);
  const r = await send(method, path, body);
  expect(r.status).toBe(400);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect([r.body.error.code, r.body.error.param]).toEqual(["invalid_request", param]);
  expect(r.body.error.message).toMatch(message);
  expect(JSON.stringify((await send("GET", "/admin/api/announcements", undefined)).body.data)).toBe(before);
}

const item = { title: "t", body: "b" };

describe("CTA links", () => {
  for (const url of ["https://example.com/download", "http://intranet.local/update", "myapp://settings/update", "ms-settings:windowsupdate"]) {
    test(`accepted and kept as typed: ${url}`, async () => {
      const r = await send("POST", "/admin/api/announcements", { ...item, ctaText: "Open", ctaUrl: url });
      expect(r.status).toBe(201);
      expect(r.body.ctaUrl).toBe(url);
    });
  }
  for (const url of ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd", "blob:https://e.com/1", "/download", "example.com", "https://"]) {
    test(`refused on create: ${url}`, () => expectRefused("POST", "/admin/api/announcements", { ...item, ctaUrl: url }, "ctaUrl", /ctaUrl/));
  }
  test("refused on update, keeping the stored link", async () => {
    const { body } = await send("POST", "/admin/api/announcements", { ...item, ctaUrl: "https://example.com/a" });
    await expectRefused("PATCH", `/admin/api/announcements/${body.id}`, { ctaUrl: "javascript:void(0)" }, "ctaUrl", /may not use the javascript: scheme/);
    expect((await send("GET", `/admin/api/announcements/${body.id}`, undefined)).body.ctaUrl).toBe("https://example.com/a");
  });
});

describe("times need a zone", () => {
  for (const [value, iso] of [
    ["2026-01-01T10:00:00Z", "2026-01-01T10:00:00.000Z"],
    ["2026-01-01T10:00:00+08:00", "2026-01-01T02:00:00.000Z"],
    ["2026-01-01T10:00-05:00", "2026-01-01T15:00:00.000Z"],
  ]) {
    test(`accepted: ${value}`, async () => {
      const r = await send("POST", "/admin/api/announcements", { ...item, startAt: value });
      expect(r.status).toBe(201);
      expect(r.body.startAt).toBe(iso);
    });
  }
  for (const value of ["2026-01-01T10:00:00", "2026-01-01", "2026-01-01 10:00"]) {
    test(`refused: ${value}`, async () => {
      await expectRefused("POST", "/admin/api/announcements", { ...item, startAt: value }, "startAt", /'startAt' must be an ISO 8601 date-time with a time zone/);
      const { body } = await send("POST", "/admin/api/announcements", item);
      await expectRefused("PATCH", `/admin/api/announcements/${body.id}`, { expiresAt: value }, "expiresAt", /time zone/);
    });
  }
});

describe("the CLI applies the same rules", () => {
  const dir = mkdtempSync(join(tmpdir(), "gantry-announcement-input-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
    const p = Bun.spawnSync([process.execPath, "src/main.ts", "announcements", "create", "--title", "t", "--body", "b", ...args, "--data-dir", dir], {
      cwd: join(import.meta.dir, "..", ".."),
      env,
    });
    return { code: p.exitCode, stderr: p.stderr.toString() };
  };
  test("a bare date and a javascript: link exit 2 with the reason", () => {
    const date = run("--expires-at", "2026-01-01");
    expect(date.code).toBe(2);
    expect(date.stderr).toContain("--expires-at must be an ISO 8601 date-time with a time zone");
    const link = run("--cta-url", "javascript:alert(1)");
    expect(link.code).toBe(2);
    expect(link.stderr).toContain("javascript: scheme");
  });
});
