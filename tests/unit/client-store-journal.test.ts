/** The heartbeat journal: appended in batches, folded into clients with the same rules as a direct write. */
import { expect, test } from "bun:test";
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteClientRepository } from "../../src/store/sqlite/clients";
import { mergedHeartbeat } from "../support/fixtures";

const beat = mergedHeartbeat;

function setup() {
  const db = openDatabase(":memory:");
  const store = new SqliteClientRepository(db);
  const journal = () => (db.query("SELECT COUNT(*) AS n FROM heartbeat_journal").get() as { n: number }).n;
  const client = (id: string) => db.query("SELECT * FROM clients WHERE client_id = ?").get(id) as Record<string, unknown> | null;
  return { db, store, journal, client };
}

test("appended heartbeats wait in the journal until a fold, which empties it", async () => {
  const { store, journal, client } = setup();
  await store.append([beat("a", 1000, { version: "1.0.0" }), beat("b", 1000)]);
  expect(journal()).toBe(2);
  expect(client("a")).toBeNull();
  expect(store.foldNow()).toEqual({ moved: 2, more: false });
  expect(journal()).toBe(0);
  expect(client("a")).toMatchObject({ version: "1.0.0", count: 1, first_seen: 1000, last_seen: 1000 });
  expect(store.foldNow()).toEqual({ moved: 0, more: false });
});

test("several batches of one client fold into one row: counts add, unsent fields keep their value, first_seen stays", async () => {
  const { store, client } = setup();
  await store.append([beat("a", 1000, { version: "1.0.0", platform: "linux", count: 2 })]);
  await store.append([beat("a", 2000, { version: "1.1.0" })]);
  await store.append([beat("a", 1500, { version: "0.9.0", locale: "de" })]); // arrived late: older than what is stored
  store.foldNow();
  expect(client("a")).toMatchObject({ version: "1.1.0", platform: "linux", locale: "", count: 4, first_seen: 1000, last_seen: 2000 });
});

test("a fold in chunks smaller than the journal still takes every row, in order", async () => {
  const { store, journal, client, db } = setup();
  for (let i = 0; i < 10; i++) await store.append([beat(`c${i % 3}`, 1000 + i, { version: `1.0.${i}` })]);
  expect(store.foldNow(4, 1)).toEqual({ moved: 4, more: true }); // one chunk only: what a background fold does per turn of the loop
  expect(journal()).toBe(6);
  expect(store.foldNow(4)).toEqual({ moved: 6, more: false });
  expect(journal()).toBe(0);
  expect((db.query("SELECT SUM(count) AS n FROM clients").get() as { n: number }).n).toBe(10);
  expect(client("c0")).toMatchObject({ version: "1.0.9", count: 4 });
});

test("every read of clients folds first", async () => {
  const { store } = setup();
  await store.append([beat("a", 5000), beat("b", 5000)]);
  expect(await store.knownCount()).toBe(2);
  await store.append([beat("c", 6000)]);
  expect(await store.onlineCount(0)).toBe(3);
  await store.append([beat("d", 7000, { app: "x" })]);
  expect(await store.onlineGroups(6500)).toEqual([{ app: "x", version: "", platform: "", arch: "", runtime: "", locale: "", clients: 1 }]);
  await store.append([beat("e", 100)]);
  expect(await store.pruneClients(1000)).toBe(1);
});

test("a fold leaves the connection at synchronous=FULL, also when called inside a transaction", async () => {
  const { db, store, journal } = setup();
  const level = () => (db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
  expect(level()).toBe(2);
  await store.append([beat("a", 1000)]);
  store.foldNow();
  expect(level()).toBe(2);
  await store.append([beat("b", 1000)]);
  db.transaction(() => store.foldNow())();
  expect(journal()).toBe(0);
  expect(level()).toBe(2);
});
