/**
 * Control characters (NUL, BEL, ESC starting ANSI sequences, C1 CSI, bidirectional overrides) in key names and
 * announcement texts: refused by the admin API (400, the error envelope) and the CLI (exit 2); and what is already
 * stored (written before the rule, or by hand) is printed by the CLI with each of them escaped, never raw.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { startGantry, type Gantry } from "../support/harness";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;
/** What a terminal would act on: clear screen, red, bell, NUL, a one-character CSI, a right-to-left override. */
const HOSTILE = ["\x1b[2J", "\x1b[31m", "\x07", "\x00", "\x9b", "\u202e"];
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/;
const tempDir = tempDirs();

function gantry(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([BUN, "src/main.ts", ...args], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

describe("refused on the way in", () => {
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry();
  });
  afterAll(async () => {
    await g.stop();
  });

  for (const c of HOSTILE) {
    const shown = [...c].map((ch) => (ch < " " || ch > "~" ? `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}` : ch)).join("");
    test(`admin API: a key name or announcement title with ${shown} is a 400 naming the field`, async () => {
      const key = await g.admin("/admin/api/keys", { method: "POST", body: JSON.stringify({ name: `ops${c}team` }) });
      expect(key.status).toBe(400);
      expect((await key.json()).error).toMatchObject({ type: "invalid_request_error", param: "name" });
      const item = { title: `Update${c} now`, body: "Line one\nline two\tand a tab", expiresAt: "2999-01-01T00:00:00Z" };
      const ann = await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify(item) });
      expect(ann.status).toBe(400);
      expect((await ann.json()).error).toMatchObject({ param: "title" });
    });
  }

  test("admin API: a body keeps its line breaks and tabs, not an escape sequence", async () => {
    const item = { title: "Update now", body: "Line one\nline two\tand a tab", expiresAt: "2999-01-01T00:00:00Z" };
    expect((await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify(item) })).status).toBe(201);
    const bad = await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify({ ...item, body: "a\x1b[2Jb" }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ param: "body" });
  });

  test("CLI: keys create and announcements create refuse them with a one-line error (exit 2)", () => {
    const dir = tempDir("control-chars");
    const key = gantry("keys", "create", "--name", "ops\x1b[31mteam", "--data-dir", dir);
    expect(key.code).toBe(2);
    expect(key.stderr).toContain("may not contain control characters (it holds U+001B)");
    expect(key.stderr).not.toMatch(RAW);
    const ann = gantry("announcements", "create", "--title", "Hi\x07", "--body", "b", "--expires-at", "2999-01-01T00:00:00Z", "--data-dir", dir);
    expect(ann.code).toBe(2);
    expect(ann.stderr).toContain("U+0007");
  }, 30_000);
});

test("what is stored already is printed with its control characters escaped: keys list/show, announcements list/show, --json", () => {
  const dir = tempDir("control-chars");
  expect(gantry("keys", "create", "--name", "plain", "--data-dir", dir).code).toBe(0);
  const created = gantry("announcements", "create", "--title", "plain", "--body", "b", "--expires-at", "2999-01-01T00:00:00Z", "--json", "--data-dir", dir);
  expect(created.code).toBe(0);
  const annId = JSON.parse(created.stdout).id;
  // As a database written before the rule (or by hand) holds them.
  const hostile = `ops${HOSTILE.join("")}team`;
  const db = openDatabase(join(dir, "gantry.db"));
  try {
    db.query("UPDATE api_keys SET name = ? WHERE name = 'plain'").run(hostile);
    db.query("UPDATE announcements SET title = ? WHERE id = ?").run(hostile, annId);
  } finally {
    db.close();
  }
  const keyId = JSON.parse(gantry("keys", "list", "--json", "--data-dir", dir).stdout)[0].id;
  const outputs = [
    gantry("keys", "list", "--data-dir", dir),
    gantry("keys", "show", keyId, "--data-dir", dir),
    gantry("keys", "list", "--json", "--data-dir", dir),
    gantry("announcements", "list", "--data-dir", dir),
    gantry("announcements", "show", String(annId), "--data-dir", dir),
    gantry("announcements", "list", "--json", "--data-dir", dir),
  ];
  for (const r of outputs) {
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain("ops");
  }
  // Text shows the escapes; JSON keeps the value (parsed back, it is the stored name).
  expect(outputs[0]!.stdout).toContain("ops\\x1b[2J\\x1b[31m\\x07\\x00\\x9b\\u202eteam");
  expect(JSON.parse(outputs[2]!.stdout)[0].name).toBe(hostile);
  expect(JSON.parse(outputs[5]!.stdout)[0].title).toBe(hostile);
}, 60_000);
