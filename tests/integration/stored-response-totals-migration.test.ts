/**
 * SQLite migration 21: a key's stored totals (what its limits read) are added by the repository once per key for a
 * batch, not by a trigger on every insert. The totals of a database at 20 carry over, the insert trigger is gone,
 * and the totals stay equal to the key's rows through batches of several keys, deletes and eviction.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { JsonObject } from "../../src/gateway/responses/stored-response-repository";
import { openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS } from "../../src/store/sqlite/migrations";
import { SqliteStoredResponses } from "../../src/store/sqlite/stored-responses";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

const response = (id: string, text: string): JsonObject => ({ id, object: "response", status: "completed", output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text }] }] });
const put = (repo: SqliteStoredResponses, n: number, keyId: string, limits?: { responses: number; bytes: number }) => {
  const id = `resp_${n.toString(16).padStart(32, "0")}`;
  return repo.put({ id, keyId, previousId: null, model: "m", createdAt: n, expiresAt: 99_999, response: response(id, "x".repeat(n)), inputItems: [] }, limits);
};

function totals(db: Database): Record<string, [number, number]> {
  const rows = db.query("SELECT key_id, responses, bytes FROM stored_response_totals WHERE responses > 0 ORDER BY key_id").all() as Array<{ key_id: string; responses: number; bytes: number }>;
  return Object.fromEntries(rows.map((r) => [r.key_id, [r.responses, r.bytes]]));
}

function counted(db: Database): Record<string, [number, number]> {
  const rows = db.query("SELECT key_id, count(*) AS n, sum(bytes) AS b FROM stored_responses GROUP BY key_id ORDER BY key_id").all() as Array<{ key_id: string; n: number; b: number }>;
  return Object.fromEntries(rows.map((r) => [r.key_id, [r.n, r.b]]));
}

test("SQLite: totals kept at 20 carry over to 21, the insert trigger is gone, and the repository keeps them equal to the rows", async () => {
  const path = join(tempDir("totals-21"), "gantry.db");
  const db20 = new Database(path, { create: true, strict: true });
  db20.exec("PRAGMA journal_mode = WAL");
  for (let v = 0; v < 20; v++) db20.exec(MIGRATIONS[v]!);
  db20.exec("PRAGMA user_version = 20");
  // Rows as the code at 20 wrote them, its trigger counting them.
  const insert = db20.query("INSERT INTO stored_responses (id, key_id, model, created_at, expires_at, response, input_items, input_count, bytes) VALUES (?, ?, 'm', ?, 99999, ?, '[]', 0, ?)");
  for (const [n, keyId] of [[1, "k1"], [2, "k1"], [3, "k2"]] as const) {
    const id = `resp_${n.toString(16).padStart(32, "0")}`;
    const text = JSON.stringify(response(id, "x".repeat(n)));
    insert.run(id, keyId, n, text, text.length);
  }
  const before = totals(db20);
  expect(before).toEqual(counted(db20));
  db20.close();

  const db = openDatabase(path, { beforeMigrate: () => {} });
  try {
    expect(totals(db)).toEqual(before);
    const triggers = (db.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'stored_responses'").all() as Array<{ name: string }>).map((r) => r.name);
    expect(triggers).not.toContain("stored_response_totals_insert");
    expect(triggers).toContain("stored_response_totals_delete");

    const repo = new SqliteStoredResponses(db);
    // One batch of three keys, two responses of k1 in it.
    await Promise.all([put(repo, 10, "k1"), put(repo, 11, "k1"), put(repo, 12, "k2"), put(repo, 13, "k3")]);
    expect(totals(db)).toEqual(counted(db));
    expect(totals(db).k1![0]).toBe(4);
    expect(await repo.delete("k1", `resp_${(10).toString(16).padStart(32, "0")}`)).toBe(true);
    expect(totals(db)).toEqual(counted(db));
    // A key held to two responses: its oldest go, counted off as they go.
    await Promise.all([put(repo, 20, "k2", { responses: 2, bytes: 1_000_000 }), put(repo, 21, "k2", { responses: 2, bytes: 1_000_000 })]);
    expect(totals(db)).toEqual(counted(db));
    expect(totals(db).k2).toEqual([2, counted(db).k2![1]]);
  } finally {
    db.close();
  }
});
