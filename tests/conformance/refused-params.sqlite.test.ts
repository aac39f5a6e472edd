/** The RefusedParamRepository suite against SQLite: two connections to one database file, as two processes have. */
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteRefusedParams } from "../../src/store/sqlite/refused-params";
import { tempDirs } from "../support/temp-dirs";
import { refusedParamsConformance } from "./refused-params.suite";

const tempDir = tempDirs();

refusedParamsConformance("SQLite", async () => {
  const path = join(tempDir("refused-params"), "gantry.db");
  const mine = openDatabase(path);
  const other = openDatabase(path);
  return {
    repo: new SqliteRefusedParams(mine),
    other: new SqliteRefusedParams(other),
    close() {
      mine.close();
      other.close();
    },
  };
});
