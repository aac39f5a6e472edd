/** The StoredResponseRepository suite against SQLite (a database file of its own per test). */
import { join } from "node:path";
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
