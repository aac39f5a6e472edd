/**
 * Download counts in PostgreSQL, and in `download_tokens` one row per counted download (keyed by a digest of
 * client + asset, never a link); each decision is one atomic statement.
 */
import type { SQL } from "bun";
import type { DownloadRepository } from "../../site/downloads/download-repository";
import { num } from "./db";

export class PostgresDownloadRepository implements DownloadRepository {
  constructor(private readonly sql: SQL) {}

  async countDownload(countKey: string, assetId: number, at: number, windowMs: number): Promise<boolean> {
    const day = new Date(at).toISOString().slice(0, 10);
    // One statement: the key's window and the day's count move together, and only for the first caller (a racing
    // insert of the same key waits for the first one's row, then finds its window live).
    const rows = await this.sql`
      WITH won AS (
        INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at, counted)
        VALUES (${countKey}, ${assetId}, '', ${at}, ${at + windowMs}, true)
        ON CONFLICT (token_hash) DO UPDATE SET asset_id = EXCLUDED.asset_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE download_tokens.expires_at <= EXCLUDED.created_at
        RETURNING 1)
      INSERT INTO download_counts (asset_id, day, count) SELECT ${assetId}, ${day}, 1 FROM won
      ON CONFLICT (asset_id, day) DO UPDATE SET count = download_counts.count + 1
      RETURNING 1`;
    return rows.length === 1;
  }

  async purgeTokens(before: number, limit: number): Promise<number> {
    return (
      await this.sql`DELETE FROM download_tokens WHERE token_hash IN
                       (SELECT token_hash FROM download_tokens WHERE expires_at < ${before} LIMIT ${limit}) RETURNING 1`
    ).length;
  }

  async downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>> {
    const rows = await this.sql`SELECT day, count FROM download_counts WHERE asset_id = ${assetId} ORDER BY day`;
    return rows.map((r: { day: string; count: unknown }) => ({ day: r.day, count: num(r.count) }));
  }
}
