/**
 * Stored responses kept before issue 32's cheaper keeping (SQLite up to migration 19, PostgreSQL up to V13: every
 * input and output item a row of stored_items, input_items `[]`) survive migration 20 / V14 (the index by key and
 * bytes dropped): every item written the old way is still found by id with its size, its input items page as before,
 * a key's stats are right, and a response kept afterwards (its short input list in its row, its named items without
 * rows) sits beside them.
 */
import { SQL } from "bun";
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { JsonObject, StoredResponseRepository } from "../../src/gateway/responses/stored-response-repository";
import { namedItemId } from "../../src/gateway/responses/named-item-ids";
import { openPostgres } from "../../src/store/postgres/db";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/postgres/migrations";
import { PostgresStoredResponses } from "../../src/store/postgres/stored-responses";
import { openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS } from "../../src/store/sqlite/migrations";
import { SqliteStoredResponses } from "../../src/store/sqlite/stored-responses";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

const message = (id: string, role: string, text: string): JsonObject => ({ id, type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text }] });
const oldInputs = [message("msg_0000000000000000000000000000000a", "user", "old é"), message("msg_0000000000000000000000000000000b", "user", "two")];
const oldOutput = [message("msg_0000000000000000000000000000000c", "assistant", "old answer")];
const oldResponse = { id: "resp_00000000000000000000000000000001", object: "response", status: "completed", output: oldOutput };

/** The rows the code before migration 20 wrote for one kept response: the response, then every item one row. */
function oldRows() {
  const response = JSON.stringify(oldResponse);
  const texts = oldInputs.map((it) => JSON.stringify(it));
  const bytes = response.length + 2 + texts.length - 1 + texts.reduce((n, t) => n + t.length, 0);
  return {
    row: { id: oldResponse.id, key_id: "k1", previous_id: null, model: "m", created_at: 1, expires_at: 99_999, response, input_items: "[]", input_count: 2, bytes },
    items: [...oldInputs, ...oldOutput].map((it, position) => ({ response_id: oldResponse.id, position, item_id: it.id as string, item: JSON.stringify(it) })),
  };
}

async function checkMigrated(repo: StoredResponseRepository): Promise<void> {
  const all = [...oldInputs, ...oldOutput];
  const found = await repo.items("k1", all.map((it) => it.id as string), 2);
  expect(all.map((it) => found.get(it.id as string))).toEqual(all);
  const sizes = await repo.itemSizes("k1", all.map((it) => it.id as string), 2);
  expect(all.map((it) => sizes.get(it.id as string))).toEqual(all.map((it) => Buffer.byteLength(JSON.stringify(it))));
  expect((await repo.items("k2", [oldOutput[0]!.id as string], 2)).size).toBe(0);
  expect((await repo.get("k1", oldResponse.id, 2))?.inputItems).toEqual(oldInputs);
  expect(await repo.inputItems("k1", oldResponse.id, 2, { limit: 1, order: "desc", after: null })).toEqual({ items: [oldInputs[1]], hasMore: true });

  // Kept now, beside it: its input list in its row, its named items found through it, the old ones still by rows.
  const id = "resp_00000000000000000000000000000002";
  const named = message(namedItemId(id, "msg", 0), "user", "new");
  const answer = message(namedItemId(id, "msg", 1), "assistant", "new answer");
  const response = { id, object: "response", status: "completed", output: [answer] };
  await repo.put({ id, keyId: "k1", previousId: oldResponse.id, model: "m", createdAt: 2, expiresAt: 99_999, response, inputItems: [oldOutput[0]!, named] });
  const both = await repo.items("k1", [named.id as string, answer.id as string, oldOutput[0]!.id as string], 3);
  expect([...both.values()]).toEqual([named, answer, oldOutput[0]]);
  expect(await repo.inputItems("k1", id, 3, { limit: 5, order: "asc", after: null })).toEqual({ items: [oldOutput[0], named], hasMore: false });
  const k1 = await repo.stats("k1");
  expect(k1.responses).toBe(2);
  expect(k1.bytes).toBe(oldRows().row.bytes + JSON.stringify(response).length + JSON.stringify([oldOutput[0], named]).length);
}

describe("stored responses through migration 20 / V14 (one index by key)", () => {
  test("SQLite: a version-19 database, migrated to the end", async () => {
    const path = join(tempDir("one-key-index"), "gantry.db");
    const db19 = new Database(path, { create: true, strict: true });
    db19.exec("PRAGMA foreign_keys = ON");
    for (let v = 0; v < 19; v++) db19.exec(MIGRATIONS[v]!);
    db19.exec("PRAGMA user_version = 19");
    const { row, items } = oldRows();
    db19.query(
      `INSERT INTO stored_responses (id, key_id, previous_id, model, created_at, expires_at, response, input_items, input_count, bytes)
       VALUES ($id, $key_id, $previous_id, $model, $created_at, $expires_at, $response, $input_items, $input_count, $bytes)`,
    ).run(row);
    for (const it of items) db19.query("INSERT INTO stored_items (response_id, position, item_id, item) VALUES ($response_id, $position, $item_id, $item)").run(it);
    db19.close();

    const db = openDatabase(path, { beforeMigrate: () => {} });
    try {
      const indexes = (db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'stored_responses'").all() as Array<{ name: string }>).map((r) => r.name);
      expect(indexes).not.toContain("stored_responses_key");
      expect(indexes).toContain("stored_responses_key_age");
      await checkMigrated(new SqliteStoredResponses(db));
      // A key's stats read the index by key and age, not the table.
      const plan = db.query("EXPLAIN QUERY PLAN SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses WHERE key_id = ?").all("k1") as Array<{ detail: string }>;
      expect(plan.map((p) => p.detail).join(" ")).toContain("COVERING INDEX stored_responses_key_age");
      expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
    } finally {
      db.close();
    }
  });

  const unavailable = postgresUnavailable();
  test.skipIf(unavailable !== null)(`PostgreSQL: a database at V13, migrated to the end${unavailable ? ` (skipped: ${unavailable})` : ""}`, async () => {
    const fresh = await freshDatabase();
    try {
      const v13 = new SQL(fresh.url);
      try {
        await v13.begin(async (tx) => {
          await tx.unsafe("CREATE TABLE gantry_schema (version INTEGER NOT NULL)");
          await tx`INSERT INTO gantry_schema (version) VALUES (13)`;
          for (let v = 0; v < 13; v++) await tx.unsafe(PG_MIGRATIONS[v]!);
          const { row, items } = oldRows();
          await tx`INSERT INTO stored_responses ${tx(row)}`;
          for (const it of items) await tx`INSERT INTO stored_items ${tx(it)}`;
        });
      } finally {
        await v13.close();
      }
      const sql = await openPostgres(fresh.url, { max: 2 });
      try {
        expect(await sql`SELECT indexname FROM pg_indexes WHERE tablename = 'stored_responses' AND indexname = 'stored_responses_key'`).toEqual([]);
        await checkMigrated(new PostgresStoredResponses(sql));
      } finally {
        await sql.close();
      }
    } finally {
      await fresh.drop();
    }
  });
});
