/**
 * Migration 15 moves each stored response's input items into rows of their own (read a page at a time): a
 * version-14 database keeps every response's items, in order, readable whole and by page.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS } from "../../src/store/sqlite/migrations";
import { SqliteStoredResponses } from "../../src/store/sqlite/stored-responses";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

test("a version-14 database keeps its stored input items through migration 15, in order", async () => {
  const path = join(tempDir("input-items"), "gantry.db");
  const old = new Database(path, { create: true, strict: true });
  old.exec("PRAGMA foreign_keys = ON");
  for (let v = 0; v < 14; v++) old.exec(MIGRATIONS[v]!);
  old.exec("PRAGMA user_version = 14");
  const items = Array.from({ length: 12 }, (_, i) => ({ id: `in_${i}`, type: "message", role: "user", content: [{ type: "input_text", text: `t${i} é` }] }));
  const input = JSON.stringify(items);
  const response = JSON.stringify({ id: "resp_a", object: "response", status: "completed", output: [] });
  old.query("INSERT INTO stored_responses (id, key_id, previous_id, model, created_at, expires_at, response, input_items, bytes) VALUES (?, 'k1', NULL, 'm', 1, 99999, ?, ?, ?)").run(
    "resp_a",
    response,
    input,
    response.length + input.length,
  );
  old.close();

  const db = openDatabase(path, { beforeMigrate: () => {} });
  try {
    const repo = new SqliteStoredResponses(db);
    expect((await repo.get("k1", "resp_a", 2))?.inputItems).toEqual(items);
    const page = await repo.inputItems("k1", "resp_a", 2, { limit: 2, order: "asc", after: "in_9" });
    expect(page).toEqual({ items: items.slice(10, 12), hasMore: false });
    expect(db.query("SELECT input_items FROM stored_responses").get()).toEqual({ input_items: "[]" });
    expect((await repo.stats("k1")).bytes).toBe(response.length + input.length);
    expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
  } finally {
    db.close();
  }
});
