/** MetaRepository on PostgreSQL: the `meta` table. */
import type { SQL } from "bun";
import type { MetaRepository } from "../../state/meta-repository";

export class PostgresMetaRepository implements MetaRepository {
  constructor(private readonly sql: SQL) {}

  async get(key: string): Promise<string | null> {
    const [row] = await this.sql`SELECT value FROM meta WHERE key = ${key}`;
    return row ? (row.value as string) : null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  async setIfAbsent(key: string, value: string): Promise<boolean> {
    const rows = await this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO NOTHING RETURNING key`;
    return rows.length === 1;
  }
}
