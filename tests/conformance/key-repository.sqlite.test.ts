/** The KeyRepository and UsageLedger suites against the embedded SQLite store (a fresh in-memory database each). */
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteKeyRepository } from "../../src/store/sqlite/keys";
import { SqliteUsageLedger } from "../../src/store/sqlite/ledger";
import { keyRepositoryConformance } from "./key-repository.suite";
import { usageLedgerConformance } from "./usage-ledger.suite";

keyRepositoryConformance("SQLite", async () => {
  const db = openDatabase(":memory:");
  let now = 0;
  const ledger = new SqliteUsageLedger(db);
  return {
    keys: new SqliteKeyRepository(db, () => now),
    ledger,
    setNow(ms) {
      now = ms;
    },
    async close() {
      await ledger.close();
      db.close();
    },
  };
});

usageLedgerConformance("SQLite", async () => {
  const db = openDatabase(":memory:");
  const ledger = new SqliteUsageLedger(db);
  return {
    ledger,
    async close() {
      await ledger.close();
      db.close();
    },
  };
});
