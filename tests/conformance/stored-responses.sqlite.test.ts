/** The StoredResponseRepository suite against SQLite (a database file of its own per test), and what is SQLite's own. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PURGE_CHUNK } from "../../src/gateway/responses/stored-response-repository";
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteStoredResponses } from "../../src/store/sqlite/stored-responses";
import { tempDirs } from "../support/temp-dirs";
import { storedResponsesConformance } from "./stored-responses.suite";

const tempDir = tempDirs();

storedResponsesConformance("SQLite", async () => {
  const db = openDatabase(join(tempDir("stored"), "gantry.db"));
  return {
    repo: new SqliteStoredResponses(db),
    itemRows: async () => (db.query("SELECT count(*) AS n FROM stored_items").get() as { n: number }).n,
    close: () => db.close(),
  };
});

describe("SQLite stored responses: the purge", () => {
  test("a large purge lets other work run between its chunks instead of holding the event loop for all of it", async () => {
    const db = openDatabase(join(tempDir("purge"), "gantry.db"));
    try {
      const repo = new SqliteStoredResponses(db);
      const n = 3 * PURGE_CHUNK + 1;
      await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const id = `resp_${i.toString(16).padStart(32, "0")}`;
          const response = { id, object: "response", status: "completed", output: [] };
          return repo.put({ id, keyId: `k${i % 3}`, previousId: null, model: "m", account: null, createdAt: 1_000, expiresAt: 5_000, response, inputItems: [] });
        }),
      );
      // Turns of the event loop that run while the purge goes on: a statement per chunk, a turn let in after each
      // full one. One statement for everything (as before) lets none in.
      let turns = 0;
      let purging = true;
      const turn = () => {
        if (!purging) return;
        turns++;
        setImmediate(turn);
      };
      setImmediate(turn);
      const removed = await repo.purgeExpired(6_000);
      purging = false;
      expect(removed).toBe(n);
      expect(turns).toBeGreaterThanOrEqual(3);
      expect((db.query("SELECT count(*) AS c FROM stored_responses").get() as { c: number }).c).toBe(0);
    } finally {
      db.close();
    }
  });
});
