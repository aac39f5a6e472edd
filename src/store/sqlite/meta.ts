/** Small named values the server keeps (the admin token's hash, sync state, ...). */
import type { Database } from "bun:sqlite";

export class MetaStore {
  constructor(private readonly db: Database) {}

  get(key: string): string | null {
    const r = this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null;
    return r ? r.value : null;
  }

  set(key: string, value: string): void {
    this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  /** Sets the value only if none exists; returns whether this call set it (first writer wins across processes). */
  setIfAbsent(key: string, value: string): boolean {
    return this.db.query("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)").run(key, value).changes === 1;
  }
}
