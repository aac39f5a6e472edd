/**
 * A full disk never delivers unbilled work. The database is made full for real (SQLite's max_page_count: every write
 * that needs a new page fails with SQLITE_FULL, the error a full file system gives): gateway calls whose ledger row
 * cannot be written are withheld, new ones are refused with 503 + Retry-After before they reach the upstream, an
 * admin write is a 503 with the envelope (not a 500), and everything works again by itself once there is room.
 * `/readyz` says so too, from a probe write of its own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { TEST_ADMIN_TOKEN, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gantry-full-"));
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "an answer worth billing" } });
  g = await startGantry({ config: { upstreamUrl: upstream.url, dataDir: dir }, databasePath: join(dir, "gantry.db"), captureLogs: true });
  key = await g.createKey();
});
afterAll(async () => {
  g.db.exec("PRAGMA max_page_count = 1073741823");
  await g.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = () =>
  fetch(`${g.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input: "hello", store: false }),
  });

/** Fills the database to its last page: nothing that needs a new page can be written. */
function fill(): void {
  const db = g.db;
  db.exec("CREATE TABLE IF NOT EXISTS filler (b BLOB)");
  const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  db.exec(`PRAGMA max_page_count = ${pages}`);
  // Big rows, then ever smaller ones, until not even a small one fits.
  for (const size of [65536, 4096, 512, 64, 8]) {
    try {
      for (;;) db.query("INSERT INTO filler VALUES (?)").run(new Uint8Array(size));
    } catch (err) {
      expect((err as { code?: string }).code).toBe("SQLITE_FULL");
    }
  }
}

test("answers are withheld, then refused before the upstream, while the ledger cannot be written; it recovers alone", async () => {
  expect((await ask()).status).toBe(200);
  fill();
  // Until the ledger's own pages are full too, rows may still fit; every 200 delivered must have its row.
  const delivered: string[] = [];
  let firstRefusal: Response | null = null;
  for (let i = 0; i < 500 && !firstRefusal; i++) {
    const res = await ask();
    if (res.status === 200) {
      await res.json();
      delivered.push(res.headers.get("x-request-id")!);
    } else firstRefusal = res;
  }
  expect(firstRefusal).not.toBeNull();
  expect(firstRefusal!.status).toBe(503);
  expect(firstRefusal!.headers.get("retry-after")).not.toBeNull();
  expect((await firstRefusal!.json()).error.code).toBe("service_unavailable");
  for (const id of delivered) expect(await g.query("SELECT id FROM usage_ledger WHERE request_id = $1", id)).toHaveLength(1);

  // From now on refused at admission: the upstream gets nothing.
  const calls = upstream.requests.length;
  for (let i = 0; i < 5; i++) {
    const res = await ask();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect((await res.json()).error).toMatchObject({ code: "service_unavailable", type: "server_error" });
  }
  expect(upstream.requests.length).toBe(calls);

  // Admin writes: once one cannot be stored, a 503 with the envelope, not a 500.
  let admin: Response | null = null;
  for (let i = 0; i < 200; i++) {
    admin = await fetch(`${g.url}/admin/api/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `full-${i}-${"x".repeat(80)}` }),
    });
    if (admin.status !== 201) break;
  }
  expect(admin!.status).toBe(503);
  expect(admin!.headers.get("retry-after")).toBe("5");
  expect((await admin!.json()).error.code).toBe("service_unavailable");

  // Room again: the probe notices within a few seconds and requests are taken, with no restart.
  g.db.exec("DROP TABLE filler");
  g.db.exec("PRAGMA max_page_count = 1073741823");
  const { value } = await pollUntil(ask, (r) => r.status === 200, { what: "a request to be taken again", timeoutMs: 15_000, stepMs: 100 });
  const body = await value.json();
  expect(body.output_text).toBe("an answer worth billing");
  expect(await g.query("SELECT id FROM usage_ledger WHERE request_id = $1", value.headers.get("x-request-id")!)).toHaveLength(1);
  const lines = g.logs.map((l) => JSON.parse(l)).map((l) => String(l.msg));
  expect(lines.filter((m) => m.includes("the ledger cannot be written"))).toHaveLength(1);
  expect(lines.filter((m) => m.includes("can be written again"))).toHaveLength(1);
}, 60_000);

test("/readyz is not ready while the database cannot be written, before any request has failed, and ready again after", async () => {
  expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
  fill();
  const calls = upstream.requests.length;
  const res = await fetch(`${g.url}/readyz`);
  expect(res.status).toBe(503);
  expect((await res.json()).error).toMatchObject({ code: "service_unavailable", message: "Not ready: the database cannot be written" });
  // What readiness found also holds gateway requests back, before any upstream work.
  expect((await ask()).status).toBe(503);
  expect(upstream.requests.length).toBe(calls);

  g.db.exec("DROP TABLE filler");
  g.db.exec("PRAGMA max_page_count = 1073741823");
  expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
  expect((await ask()).status).toBe(200);

  // A database that became read-only (a remount, a permission change): the same.
  g.db.exec("PRAGMA query_only = ON");
  try {
    expect((await fetch(`${g.url}/readyz`)).status).toBe(503);
  } finally {
    g.db.exec("PRAGMA query_only = OFF");
  }
  expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
}, 30_000);
