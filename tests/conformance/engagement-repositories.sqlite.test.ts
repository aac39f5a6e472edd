/** The AnnouncementRepository and ClientRepository suites against SQLite (a fresh in-memory database each). */
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteAnnouncementRepository } from "../../src/store/sqlite/announcements";
import { SqliteClientRepository } from "../../src/store/sqlite/clients";
import { engagementRepositoriesConformance } from "./engagement-repositories.suite";

engagementRepositoriesConformance("SQLite", async () => {
  const db = openDatabase(":memory:");
  let touched = 0;
  return {
    announcements: new SqliteAnnouncementRepository(db, () => touched++),
    clients: new SqliteClientRepository(db),
    announcementChanges: () => touched,
    close: () => db.close(),
  };
});
