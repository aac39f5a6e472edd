/**
 * Migration 10 rebuilds release_assets with AUTOINCREMENT (asset ids are never reused after a delete). An
 * existing database keeps every asset, download link and download count through it, and foreign keys still hold.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS } from "../../src/store/sqlite/migrations";
import { SqliteReleaseRepository } from "../../src/store/sqlite/releases";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

test("a version-9 database keeps its assets, links and counts through migration 10, and deleted ids stay unused", async () => {
  const path = join(tempDir("asset-ids"), "gantry.db");
  const old = new Database(path, { create: true, strict: true });
  old.exec("PRAGMA foreign_keys = ON");
  for (let v = 0; v < 9; v++) old.exec(MIGRATIONS[v]);
  old.exec("PRAGMA user_version = 9");
  old.exec(`
    INSERT INTO releases (id, version, version_key, published_at, created_at, updated_at) VALUES (1, '1.0.0', '1.0.0', 'x', 1, 1);
    INSERT INTO release_assets (id, release_id, name, sha256, size, mirrored, created_at, updated_at)
      VALUES (1, 1, 'a.exe', 'aa', 3, 1, 1, 1), (2, 1, 'b.dmg', 'bb', 4, 1, 1, 1);
    INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at) VALUES ('t1', 1, 'aa', 1, 99), ('t2', 2, 'bb', 1, 99);
    INSERT INTO download_counts (asset_id, day, count) VALUES (1, '2026-01-01', 5), (2, '2026-01-01', 7);
  `);
  old.close();

  const db = openDatabase(path, { beforeMigrate: () => {} });
  try {
    expect(db.query("SELECT id, name FROM release_assets ORDER BY id").all()).toEqual([{ id: 1, name: "a.exe" }, { id: 2, name: "b.dmg" }]);
    expect(db.query("SELECT token_hash, asset_id FROM download_tokens ORDER BY token_hash").all()).toEqual([
      { token_hash: "t1", asset_id: 1 },
      { token_hash: "t2", asset_id: 2 },
    ]);
    expect(db.query("SELECT asset_id, count FROM download_counts ORDER BY asset_id").all()).toEqual([
      { asset_id: 1, count: 5 },
      { asset_id: 2, count: 7 },
    ]);
    expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
    expect((db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");

    // The children still follow their asset; the newest asset's id is not handed out again.
    const releases = new SqliteReleaseRepository(db, () => 1000, () => {});
    await releases.deleteAsset(2);
    expect(db.query("SELECT count(*) AS n FROM download_tokens WHERE asset_id = 2").get()).toEqual({ n: 0 });
    expect(db.query("SELECT count(*) AS n FROM download_counts WHERE asset_id = 2").get()).toEqual({ n: 0 });
    const { asset } = await releases.putAsset(1, { name: "c.AppImage", classification: {}, fields: {} });
    expect(asset.id).toBe(3);
  } finally {
    db.close();
  }
});
