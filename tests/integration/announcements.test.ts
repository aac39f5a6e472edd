/**
 * GET /api/v1/announcements over HTTP, with announcements created by the CLI (a separate process on the same
 * database file as the running server), re-show, revalidation headers, bad queries; and the admin API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;

/** The CLI as an operator runs it, without any GANTRY_* settings leaking in from the environment. */
function cli(dataDir: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([BUN, "src/main.ts", "announcements", ...args, "--data-dir", dataDir], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function cliJson(dataDir: string, ...args: string[]): any {
  const r = cli(dataDir, ...args, "--json");
  if (r.code !== 0) throw new Error(`CLI failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

let dir: string;
let g: Gantry;
const ids: Record<string, number> = {};

async function doc(query: string, init?: RequestInit): Promise<any> {
  const res = await fetch(`${g.url}/api/v1/announcements${query}`, init);
  expect(res.status).toBe(200);
  return res.json();
}
const titles = (d: any) => d.announcements.map((a: any) => a.title);
/** The document once it shows what the CLI (another process) just changed; see support/other-process.ts. */
const docShowing = (query: string, done: (d: any) => boolean, what: string) => seenFromAnotherProcess(() => doc(query), done, what);
const item = (d: any, id: number) => d.announcements.find((a: any) => a.id === id);

beforeAll(async () => {
  dir = tempDir("ann");
  g = await startGantry({ config: { dataDir: dir }, databasePath: join(dir, "gantry.db") });
  // Created by the CLI while the server runs on the same file.
  ids.maintenance = cliJson(dir, "create", "--title", "Maintenance", "--body", "Down Saturday", "--level", "warning",
    "--target-surface", "all", "--start-at", "2020-01-01T00:00:00Z", "--dismiss-key", "maint-1",
    "--locale-text", "zh-CN.title=维护通知", "--locale-text", "zh.body=周六停机").id;
  ids.home = cliJson(dir, "create", "--title", "Home only", "--body", "Welcome", "--target-surface", "home",
    "--start-at", "2021-01-01T00:00:00Z").id;
  ids.update = cliJson(dir, "create", "--title", "Please update", "--body", "Security fix", "--target-surface", "client",
    "--level", "critical", "--min-version", "1.0", "--max-version", "1.4.99", "--app", "myapp",
    "--cta-text", "Update", "--cta-url", "https://example.com/dl", "--start-at", "2022-01-01T00:00:00Z").id;
  ids.test = cliJson(dir, "create", "--title", "Test build notice", "--body", "Only testers", "--target-surface", "client",
    "--test-only", "--start-at", "2023-01-01T00:00:00Z").id;
  ids.future = cliJson(dir, "create", "--title", "Not yet", "--body", "Later", "--start-at", "2999-01-01T00:00:00Z").id;
  ids.expired = cliJson(dir, "create", "--title", "Gone", "--body", "Past", "--start-at", "2020-01-01T00:00:00Z",
    "--expires-at", "2020-02-01T00:00:00Z").id;
  // The last item the public document shows; the ones after it (scheduled, expired) it never shows.
  await docShowing("?test=1", (d) => titles(d).includes("Test build notice"), "the items created by the CLI");
});

afterAll(async () => {
  await g.stop();
});
// After the hook above: the server is stopped before its directory goes.
const tempDir = tempDirs();

describe("public document over HTTP (items created by the CLI)", () => {
  test("client surface: client and all items, level order, every spec field, nothing internal", async () => {
    const d = await doc("?surface=client&app=myapp&version=1.2.0");
    expect(d.schema).toBe("app.announcements.v1");
    expect(d.surface).toBe("client");
    expect(titles(d)).toEqual(["Please update", "Maintenance"]);
    const item = d.announcements[0];
    expect(Object.keys(item).sort()).toEqual(
      ["body", "ctaText", "ctaUrl", "dismissKey", "displayType", "expiresAt", "id", "level", "maxVersion", "minVersion",
        "startAt", "targetSurface", "testOnly", "title", "type"].sort(),
    );
    expect(item).toMatchObject({
      id: ids.update,
      type: "modal",
      displayType: "modal",
      targetSurface: "client",
      level: "critical",
      ctaText: "Update",
      ctaUrl: "https://example.com/dl",
      minVersion: "1.0",
      maxVersion: "1.4.99",
      startAt: "2022-01-01T00:00:00.000Z",
      expiresAt: "",
      testOnly: false,
    });
    expect(typeof item.dismissKey).toBe("string");
    expect(item.dismissKey.length).toBeGreaterThan(0);
  });
  test("home surface", async () => {
    expect(titles(await doc("?surface=home"))).toEqual(["Maintenance", "Home only"]);
  });
  test("surface defaults to client", async () => {
    expect(titles(await doc(""))).toEqual(["Maintenance"]);
  });
  test("version range: outside the range, or no version at all, hides the bounded item", async () => {
    expect(titles(await doc("?app=myapp&version=1.5.0"))).toEqual(["Maintenance"]);
    expect(titles(await doc("?app=myapp&version=1.0"))).toEqual(["Please update", "Maintenance"]);
    expect(titles(await doc("?app=myapp"))).toEqual(["Maintenance"]);
  });
  test("target app: another app does not see it", async () => {
    expect(titles(await doc("?app=otherapp&version=1.2.0"))).toEqual(["Maintenance"]);
  });
  test("test-only items: with test=1, staging=1 or a staging/test app name", async () => {
    expect(titles(await doc("?test=1"))).toEqual(["Maintenance", "Test build notice"]);
    expect(titles(await doc("?staging=1"))).toEqual(["Maintenance", "Test build notice"]);
    expect(titles(await doc("?app=myapp-staging&version=1.2.0"))).toEqual(["Please update", "Maintenance", "Test build notice"]);
    expect(titles(await doc("?app=test.myapp"))).toContain("Test build notice");
    expect(titles(await doc("?app=contest"))).not.toContain("Test build notice");
  });
  test("locale: exact tag, then language, then default", async () => {
    const cn = (await doc("?locale=zh-CN")).announcements[0];
    expect([cn.title, cn.body]).toEqual(["维护通知", "周六停机"]);
    const tw = (await doc("?locale=zh_TW")).announcements[0];
    expect([tw.title, tw.body]).toEqual(["Maintenance", "周六停机"]);
    const en = (await doc("?locale=en")).announcements[0];
    expect([en.title, en.body]).toEqual(["Maintenance", "Down Saturday"]);
  });
  test("scheduled and expired items are not served", async () => {
    const all = titles(await doc("?surface=home&test=1"));
    expect(all).not.toContain("Not yet");
    expect(all).not.toContain("Gone");
  });
});

describe("bad query values get a 400 with the error envelope", () => {
  const cases: Array<[string, string]> = [
    ["?surface=all", "surface"],
    ["?surface=desktop", "surface"],
    ["?version=latest", "version"],
    ["?locale=en%20US", "locale"],
    ["?test=yes", "test"],
    ["?staging=2", "staging"],
    ["?surface=client&surface=home", "surface"],
    [`?app=${"a".repeat(129)}`, "app"],
  ];
  for (const [q, param] of cases) {
    test(q.slice(0, 40), async () => {
      const res = await fetch(`${g.url}/api/v1/announcements${q}`);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "invalid_request_error", code: "invalid_request", param } });
    });
  }
});

describe("revalidation (as /api/v1/latest)", () => {
  test("no-cache, strong ETag, 304 on a strong or weak match, 200 on a stale tag", async () => {
    const res = await fetch(`${g.url}/api/v1/announcements?surface=home`);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    await res.text();

    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const r = await fetch(`${g.url}/api/v1/announcements?surface=home`, { headers: { "if-none-match": inm } });
      expect(r.status).toBe(304);
      expect(r.headers.get("etag")).toBe(etag);
      expect(await r.text()).toBe("");
    }
    const stale = await fetch(`${g.url}/api/v1/announcements?surface=home`, { headers: { "if-none-match": '"stale"' } });
    expect(stale.status).toBe(200);
    expect((await stale.json()).surface).toBe("home");
  });
  test("another query is another document with another ETag", async () => {
    const a = await fetch(`${g.url}/api/v1/announcements?surface=home`);
    const b = await fetch(`${g.url}/api/v1/announcements?surface=client`);
    expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"));
  });
});

describe("re-show via a new dismissKey", () => {
  test("CLI reshow: the client gets the same item with a new key, and its cached ETag no longer matches", async () => {
    const before = await fetch(`${g.url}/api/v1/announcements?surface=home`);
    const etag = before.headers.get("etag")!;
    const oldKey = (await before.json()).announcements.find((a: any) => a.id === ids.home).dismissKey;

    const out = cliJson(dir, "reshow", String(ids.home));
    expect(out.dismissKey).not.toBe(oldKey);

    const after = await seenFromAnotherProcess(
      () => fetch(`${g.url}/api/v1/announcements?surface=home`, { headers: { "if-none-match": etag } }),
      (res) => res.status !== 304,
      "the cached ETag to stop matching",
    );
    expect(after.status).toBe(200);
    const reshown = item(await after.json(), ids.home);
    expect(reshown.dismissKey).toBe(out.dismissKey);
    expect(reshown.title).toBe("Home only");
  });
  test("CLI reshow with a chosen key; the same key again is refused (exit 2)", async () => {
    expect(cliJson(dir, "reshow", String(ids.maintenance), "--dismiss-key", "maint-2").dismissKey).toBe("maint-2");
    await docShowing("?surface=home", (d) => item(d, ids.maintenance).dismissKey === "maint-2", "the chosen dismissKey");
    const again = cli(dir, "reshow", String(ids.maintenance), "--dismiss-key", "maint-2");
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("different");
  });
  test("admin API reshow (empty body = generated key)", async () => {
    const r = await g.admin(`/admin/api/announcements/${ids.maintenance}/reshow`, { method: "POST" });
    expect(r.status).toBe(200);
    const v = await r.json();
    expect(v.dismissKey).not.toBe("maint-2");
    expect((await doc("")).announcements[0].dismissKey).toBe(v.dismissKey);
  });
});

describe("CLI", () => {
  test("list --json shows every stored field and the status", () => {
    const list = cliJson(dir, "list");
    const byTitle = Object.fromEntries(list.map((a: any) => [a.title, a]));
    expect(byTitle["Not yet"].status).toBe("scheduled");
    expect(byTitle["Gone"].status).toBe("expired");
    expect(byTitle["Maintenance"].status).toBe("active");
    expect(byTitle["Maintenance"].locales).toEqual({ "zh-CN": { title: "维护通知" }, zh: { body: "周六停机" } });
    expect(byTitle["Please update"].app).toBe("myapp");
  });
  test("update changes only the given fields and the server serves the change", async () => {
    const v = cliJson(dir, "update", String(ids.update), "--max-version", "none");
    expect(v.maxVersion).toBe("");
    expect(v.minVersion).toBe("1.0");
    await docShowing("?app=myapp&version=9.0", (d) => titles(d).includes("Please update"), "the item without an upper version bound");
  });
  test("bad input exits 2 with a message; unknown id exits 1", () => {
    const r1 = cli(dir, "create", "--title", "x", "--body", "y", "--min-version", "newest");
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain("--min-version");
    const r2 = cli(dir, "create", "--title", "x", "--body", "y", "--dismiss-key", "");
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain("expire");
    expect(cli(dir, "create", "--title", "only a title").code).toBe(2);
    expect(cli(dir, "update", "99999", "--title", "x").code).toBe(1);
    expect(cli(dir, "frobnicate").code).toBe(2);
  });
  test("delete removes it from the public document", async () => {
    const id = cliJson(dir, "create", "--title", "Temporary", "--body", "x", "--start-at", "2020-01-01T00:00:00Z").id;
    await docShowing("", (d) => titles(d).includes("Temporary"), "the created item");
    const r = cli(dir, "delete", String(id));
    expect(r.code).toBe(0);
    await docShowing("", (d) => !titles(d).includes("Temporary"), "the deleted item to go");
  });
  test("--help documents the options of OPERATOR.md and ours", () => {
    const r = cli(dir, "--help");
    expect(r.code).toBe(0);
    for (const opt of ["--title", "--body", "--type", "--display-type", "--target-surface", "--level", "--app", "--cta-text",
      "--cta-url", "--min-version", "--max-version", "--start-at", "--expires-at", "--dismiss-key", "--test-only",
      "--locale-text", "reshow"]) {
      expect(r.stdout).toContain(opt);
    }
  });
});

describe("a change by the CLI while the server runs", () => {
  test("is served within a tenth of a second (plus a loaded machine's margin), though the document was cached", async () => {
    const before = titles(await doc("?surface=home"));
    expect(before).not.toContain("Late CLI item");
    const id = cliJson(dir, "create", "--title", "Late CLI item", "--body", "b", "--target-surface", "home", "--start-at", "2020-01-01T00:00:00Z").id;
    await docShowing("?surface=home", (d) => titles(d).includes("Late CLI item"), "the late item");
    expect(cli(dir, "delete", String(id)).code).toBe(0);
  });
});

describe("admin API", () => {
  test("needs the admin token", async () => {
    const r = await fetch(`${g.url}/admin/api/announcements`);
    expect(r.status).toBe(401);
  });
  test("create, read, patch, delete", async () => {
    const c = await g.admin("/admin/api/announcements", {
      method: "POST",
      body: JSON.stringify({ title: "API item", body: "b", targetSurface: "home", expiresAt: "2999-01-01T00:00:00Z", dismissKey: "" }),
    });
    expect(c.status).toBe(201);
    const created = await c.json();
    expect(created).toMatchObject({ title: "API item", targetSurface: "home", dismissKey: "", status: "active", level: "info" });

    const p = await g.admin(`/admin/api/announcements/${created.id}`, { method: "PATCH", body: JSON.stringify({ level: "warning" }) });
    expect(p.status).toBe(200);
    expect((await p.json()).level).toBe("warning");

    const got = await (await g.admin(`/admin/api/announcements/${created.id}`)).json();
    expect(got.level).toBe("warning");
    expect(got.title).toBe("API item");

    const list = await (await g.admin("/admin/api/announcements")).json();
    expect(list.object).toBe("list");
    expect(list.data.map((a: any) => a.id)).toContain(created.id);

    const d = await g.admin(`/admin/api/announcements/${created.id}`, { method: "DELETE" });
    expect(d.status).toBe(204);
    expect((await g.admin(`/admin/api/announcements/${created.id}`)).status).toBe(404);
  });
  const bad: Array<[string, string, string, unknown, number, string | null]> = [
    ["unknown field", "POST", "", { title: "t", body: "b", colour: "red" }, 400, "colour"],
    ["neither expiring nor dismissible", "POST", "", { title: "t", body: "b", dismissKey: "" }, 400, "dismissKey"],
    ["overlong title", "POST", "", { title: "x".repeat(201), body: "b" }, 400, "title"],
    ["missing body", "POST", "", { title: "t" }, 400, "body"],
    ["bad level on patch", "PATCH", "/1", { level: "loud" }, 400, "level"],
    ["patch of a missing item", "PATCH", "/99999", { level: "info" }, 404, null],
    ["non-numeric id", "PATCH", "/abc", { level: "info" }, 404, null],
  ];
  for (const [title, method, path, body, status, param] of bad) {
    test(`${status} ${title}`, async () => {
      const r = await g.admin(`/admin/api/announcements${path}`, { method, body: JSON.stringify(body) });
      expect(r.status).toBe(status);
      const e = await r.json();
      expect(e.error.param).toBe(param);
    });
  }
  test("a body that is not JSON gets the envelope", async () => {
    const r = await g.admin("/admin/api/announcements", { method: "POST", body: "{nope" });
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe("invalid_json");
  });
});
