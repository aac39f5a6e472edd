/**
 * Stored responses kept before items had rows by position (SQLite before migration 15, PostgreSQL before V9) survive
 * the move: a database built at the earlier version, its rows written as the code of that time wrote them (each
 * response's input items as one JSON list, its items by id in stored_items, a replayed id kept once), is migrated to
 * the end, then every input item must read back whole and a page at a time (order, ids, text as stored), and every
 * item must be found by id for its key only, with its size.
 */
import { SQL } from "bun";
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { JsonObject, StoredResponseRepository } from "../../src/gateway/responses/stored-response-repository";
import { openPostgres } from "../../src/store/postgres/db";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/postgres/migrations";
import { PostgresStoredResponses } from "../../src/store/postgres/stored-responses";
import { openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS } from "../../src/store/sqlite/migrations";
import { SqliteStoredResponses } from "../../src/store/sqlite/stored-responses";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

/** A row of stored_responses as the old code wrote it. */
interface OldResponse {
  id: string;
  key_id: string;
  previous_id: string | null;
  created_at: number;
  response: JsonObject;
  inputItems: JsonObject[];
}

const message = (id: string, text: string): JsonObject => ({ id, type: "message", role: "user", content: [{ type: "input_text", text }] });
const output = (id: string, text: string): JsonObject => ({ id, type: "message", role: "assistant", content: [{ type: "output_text", text }] });

// Texts that a re-serialisation would change: keys out of the usual order, non-ASCII, an escaped NUL (which
// PostgreSQL's jsonb refuses), a quote and a backslash, a number with a fraction of zeros.
const aInputs: JsonObject[] = [
  ...Array.from({ length: 10 }, (_, i) => message(`in_a${i}`, `t${i} é`)),
  { content: [{ text: "nul \u0000 here, \"quoted\" \\ 🎉", type: "input_text" }], role: "user", type: "message", id: "in_odd" },
  { type: "function_call_output", id: "fco_a", call_id: "call_1", output: "{\"n\":1.50}", extra: { z: 1, a: [2, { y: null }] } },
];
const old: OldResponse[] = [
  { id: "resp_a", key_id: "k1", previous_id: null, created_at: 1, inputItems: aInputs, response: { id: "resp_a", object: "response", status: "completed", output: [output("out_a1", "one"), { type: "reasoning", summary: [] }, output("out_a2", "two")] } },
  // Replays out_a1 with its id (the old by-id table kept the first copy only), and repeats one id of its own.
  { id: "resp_b", key_id: "k1", previous_id: "resp_a", created_at: 2, inputItems: [output("out_a1", "one"), message("in_b", "b"), message("in_b", "b again")], response: { id: "resp_b", object: "response", status: "completed", output: [output("out_b", "three")] } },
  { id: "resp_c", key_id: "k2", previous_id: null, created_at: 3, inputItems: [message("in_a0", "k2's own")], response: { id: "resp_c", object: "response", status: "incomplete", output: [] } },
  { id: "resp_d", key_id: "k1", previous_id: null, created_at: 4, inputItems: [], response: { id: "resp_d", object: "response", status: "completed", output: [output("out_d", "four")] } },
];

/** The statements of that time: the response row, then its items with an id, input first, the first of an id kept. */
function oldRows(r: OldResponse) {
  const response = JSON.stringify(r.response);
  const input_items = JSON.stringify(r.inputItems);
  const outputs = (r.response.output as JsonObject[]).filter((it) => typeof it.id === "string");
  return {
    row: { id: r.id, key_id: r.key_id, previous_id: r.previous_id, model: "m", created_at: r.created_at, expires_at: 99_999, response, input_items, bytes: response.length + input_items.length },
    items: [...r.inputItems, ...outputs].map((it) => ({ key_id: r.key_id, item_id: it.id as string, response_id: r.id, item: JSON.stringify(it) })),
  };
}

const texts = (items: JsonObject[] | undefined) => items?.map((it) => JSON.stringify(it));

async function checkMigrated(repo: StoredResponseRepository): Promise<void> {
  for (const r of old) {
    const got = await repo.get(r.key_id, r.id, 2);
    // As stored: the same text, key order and escapes included.
    expect(texts(got?.inputItems)).toEqual(texts(r.inputItems));
    expect(got?.bytes).toBe(oldRows(r).row.bytes);
    expect(JSON.stringify(await repo.responseObject(r.key_id, r.id, 2))).toBe(JSON.stringify(r.response));
  }
  const page = async (q: { limit: number; order: "asc" | "desc"; after: string | null }, id = "resp_a", key = "k1") => {
    const p = await repo.inputItems(key, id, 2, q);
    return p === null || p === "after_not_found" ? p : { items: texts(p.items), hasMore: p.hasMore };
  };
  const a = texts(aInputs)!;
  expect(await page({ limit: 5, order: "asc", after: null })).toEqual({ items: a.slice(0, 5), hasMore: true });
  expect(await page({ limit: 2, order: "asc", after: "in_a9" })).toEqual({ items: a.slice(10, 12), hasMore: false });
  expect(await page({ limit: 3, order: "desc", after: null })).toEqual({ items: a.slice(9).reverse(), hasMore: true });
  expect(await page({ limit: 100, order: "desc", after: "in_a2" })).toEqual({ items: a.slice(0, 2).reverse(), hasMore: false });
  // Output items are not input items; the other key's response is not k1's.
  expect(await page({ limit: 5, order: "asc", after: "out_a1" })).toBe("after_not_found");
  expect(await page({ limit: 5, order: "asc", after: null }, "resp_c")).toBeNull();
  expect(await page({ limit: 5, order: "desc", after: null }, "resp_d")).toEqual({ items: [], hasMore: false });
  // The repeated id: the first of it in the order asked for, as the list read whole would find it.
  expect(await page({ limit: 5, order: "asc", after: "in_b" }, "resp_b")).toEqual({ items: [texts(old[1]!.inputItems)![2]], hasMore: false });
  expect(await page({ limit: 5, order: "desc", after: "in_b" }, "resp_b")).toEqual({ items: texts(old[1]!.inputItems)!.slice(0, 2).reverse(), hasMore: false });

  // By id, per key: every item that had a row before still has one, with the same text and size.
  const expected = new Map<string, JsonObject>();
  for (const r of old.filter((r) => r.key_id === "k1")) for (const it of oldRows(r).items) if (!expected.has(it.item_id)) expected.set(it.item_id, JSON.parse(it.item));
  const ids = [...expected.keys()];
  const found = await repo.items("k1", [...ids, "nope"], 2);
  expect(new Map([...found].map(([id, it]) => [id, JSON.stringify(it)]))).toEqual(new Map([...expected].map(([id, it]) => [id, JSON.stringify(it)])));
  const sizes = await repo.itemSizes("k1", ids, 2);
  expect(sizes).toEqual(new Map(ids.map((id) => [id, Buffer.byteLength(JSON.stringify(expected.get(id)))])));
  expect(texts([...(await repo.items("k2", ["in_a0", "out_a1"], 2)).values()])).toEqual([JSON.stringify(message("in_a0", "k2's own"))]);
  expect((await repo.stats()).responses).toBe(old.length);
}

describe("stored items through the migration to rows by position", () => {
  test("SQLite: a version-14 database, migrated to the end", async () => {
    const path = join(tempDir("input-items"), "gantry.db");
    const db14 = new Database(path, { create: true, strict: true });
    db14.exec("PRAGMA foreign_keys = ON");
    for (let v = 0; v < 14; v++) db14.exec(MIGRATIONS[v]!);
    db14.exec("PRAGMA user_version = 14");
    const insert = db14.query(
      `INSERT INTO stored_responses (id, key_id, previous_id, model, created_at, expires_at, response, input_items, bytes)
       VALUES ($id, $key_id, $previous_id, $model, $created_at, $expires_at, $response, $input_items, $bytes)`,
    );
    const insertItem = db14.query("INSERT OR IGNORE INTO stored_items (key_id, item_id, response_id, item) VALUES ($key_id, $item_id, $response_id, $item)");
    for (const r of old) {
      const { row, items } = oldRows(r);
      insert.run(row);
      for (const it of items) insertItem.run(it);
    }
    db14.close();

    const db = openDatabase(path, { beforeMigrate: () => {} });
    try {
      await checkMigrated(new SqliteStoredResponses(db));
      expect(db.query("SELECT count(*) AS n FROM stored_responses WHERE input_items <> '[]'").get()).toEqual({ n: 0 });
      expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
    } finally {
      db.close();
    }
  });

  const unavailable = postgresUnavailable();
  test.skipIf(unavailable !== null)(`PostgreSQL: a database at V8, migrated to the end${unavailable ? ` (skipped: ${unavailable})` : ""}`, async () => {
    const fresh = await freshDatabase();
    try {
      const v8 = new SQL(fresh.url);
      try {
        await v8.begin(async (tx) => {
          await tx.unsafe("CREATE TABLE gantry_schema (version INTEGER NOT NULL)");
          await tx`INSERT INTO gantry_schema (version) VALUES (8)`;
          for (let v = 0; v < 8; v++) await tx.unsafe(PG_MIGRATIONS[v]!);
          for (const r of old) {
            const { row, items } = oldRows(r);
            await tx`INSERT INTO stored_responses ${tx(row)}`;
            for (const it of items) await tx`INSERT INTO stored_items ${tx(it)} ON CONFLICT (key_id, item_id) DO NOTHING`;
          }
        });
      } finally {
        await v8.close();
      }
      const sql = await openPostgres(fresh.url, { max: 2 });
      try {
        await checkMigrated(new PostgresStoredResponses(sql));
        expect(await sql`SELECT count(*)::int AS n FROM stored_responses WHERE input_items <> '[]'`).toEqual([{ n: 0 }]);
      } finally {
        await sql.close();
      }
    } finally {
      await fresh.drop();
    }
  });
});
