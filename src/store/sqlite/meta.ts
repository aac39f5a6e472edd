/** MetaRepository on SQLite: the `meta` table (which also holds the change counters the triggers move). */
import type { Database } from "bun:sqlite";
import type { MetaRepository } from "../../state/meta-repository";

export class SqliteMetaRepository implements MetaRepository {
  private readonly select;
  private readonly upsert;
  private readonly insertOnce;

  constructor(db: Database) {
    this.select = db.query("SELECT value FROM meta WHERE key = ?");
    this.upsert = db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    this.insertOnce = db.query("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)");
  }

  async get(key: string): Promise<string | null> {
    const r = this.select.get(key) as { value: string } | null;
    return r ? r.value : null;
  }

  async set(key: string, value: string): Promise<void> {
    this.upsert.run(key, value);
  }

  async setIfAbsent(key: string, value: string): Promise<boolean> {
    return this.insertOnce.run(key, value).changes === 1;
  }
}
