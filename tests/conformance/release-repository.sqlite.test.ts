/** The ReleaseRepository and DownloadRepository suites against SQLite (a fresh in-memory database each). */
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteDownloadRepository } from "../../src/store/sqlite/downloads";
import { SqliteReleaseRepository } from "../../src/store/sqlite/releases";
import { releaseRepositoryConformance } from "./release-repository.suite";

releaseRepositoryConformance("SQLite", async () => {
  const db = openDatabase(":memory:");
  let touched = 0;
  return {
    releases: new SqliteReleaseRepository(db, () => 1000, () => touched++),
    downloads: new SqliteDownloadRepository(db),
    changes: () => touched,
    close: () => db.close(),
  };
});
