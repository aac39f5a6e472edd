/** The MetaRepository suite against SQLite: two connections to one database file, as two processes have. */
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteMetaRepository } from "../../src/store/sqlite/meta";
import { tempDirs } from "../support/temp-dirs";
import { metaRepositoryConformance } from "./meta-repository.suite";

const tempDir = tempDirs();

metaRepositoryConformance("SQLite", async () => {
  const path = join(tempDir("meta"), "gantry.db");
  const mine = openDatabase(path);
  const other = openDatabase(path);
  return {
    meta: new SqliteMetaRepository(mine),
    other: new SqliteMetaRepository(other),
    close() {
      mine.close();
      other.close();
    },
  };
});
