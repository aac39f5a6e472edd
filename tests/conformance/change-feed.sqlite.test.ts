/** The ChangeFeed suite against the embedded backend: two connections to one database file, as two processes have. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ChangeTopic } from "../../src/state/change-feed";
import { SqliteChangeFeed } from "../../src/store/sqlite/change-feed";
import { openDatabase } from "../../src/store/sqlite/db";
import { tempDirs } from "../support/temp-dirs";
import { changeFeedConformance } from "./change-feed.suite";

const tempDir = tempDirs();

/** A real write to one of the topic's tables: the triggers, not the test, move the counter. */
const WRITES: Record<ChangeTopic, string> = {
  keys: `INSERT INTO api_keys (id, name, prefix, hash, status, created_at, updated_at)
         VALUES (lower(hex(randomblob(8))), lower(hex(randomblob(8))), 'p', lower(hex(randomblob(32))), 'active', 0, 0)`,
  releases: `INSERT INTO releases (version, version_key, published_at, created_at, updated_at)
             VALUES (lower(hex(randomblob(8))), lower(hex(randomblob(8))), '2026-01-01T00:00:00Z', 0, 0)`,
  announcements: `INSERT INTO announcements (title, dismiss_key, created_at, updated_at) VALUES ('t', lower(hex(randomblob(8))), 0, 0)`,
};

function openPair() {
  const path = join(tempDir("feed"), "gantry.db");
  const mine = openDatabase(path);
  const other = openDatabase(path);
  return { mine, other };
}

changeFeedConformance("SQLite (polled counters)", async () => {
  const { mine, other } = openPair();
  return {
    feed: new SqliteChangeFeed(mine),
    async changeElsewhere(topic) {
      other.query(WRITES[topic]).run();
    },
    close() {
      mine.close();
      other.close();
    },
  };
});

describe("SQLite change feed", () => {
  test("a version is read from the database at most once per poll interval", () => {
    const { mine, other } = openPair();
    let t = 0;
    const feed = new SqliteChangeFeed(mine, { clock: () => t });
    const first = feed.version("keys");
    other.query(WRITES.keys).run();
    t = 50;
    expect(feed.version("keys")).toBe(first);
    t = 100;
    expect(feed.version("keys")).not.toBe(first);
    mine.close();
    other.close();
  });
});
