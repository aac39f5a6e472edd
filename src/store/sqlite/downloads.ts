/**
 * Download counts in SQLite: a count per asset per UTC day, and in `download_tokens` one row per counted download
 * (keyed by a digest of client + asset, never a link), which keeps that client's further requests for the same
 * bytes from counting again until the row expires.
 */
import type { Database } from "bun:sqlite";
import type { DownloadRepository } from "../../site/downloads/download-repository";

export class SqliteDownloadRepository implements DownloadRepository {
  constructor(private readonly db: Database) {}

  async countDownload(countKey: string, assetId: number, at: number, windowMs: number): Promise<boolean> {
    return this.db.transaction(() => {
      // A new key, or one whose window is over, wins; a live one leaves the row untouched (0 changes).
      const won =
        this.db
          .query(
            `INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at, counted) VALUES (?, ?, '', ?, ?, 1)
             ON CONFLICT(token_hash) DO UPDATE SET asset_id = excluded.asset_id, created_at = excluded.created_at, expires_at = excluded.expires_at
             WHERE download_tokens.expires_at <= excluded.created_at`,
          )
          .run(countKey, assetId, at, at + windowMs).changes === 1;
      if (!won) return false;
      const day = new Date(at).toISOString().slice(0, 10);
      this.db
        .query("INSERT INTO download_counts (asset_id, day, count) VALUES (?, ?, 1) ON CONFLICT(asset_id, day) DO UPDATE SET count = count + 1")
        .run(assetId, day);
      return true;
    }).immediate();
  }

  /** One small batch (by the expiry index), so a caller can yield between batches. */
  async purgeTokens(before: number, limit: number): Promise<number> {
    return this.db
      .query("DELETE FROM download_tokens WHERE token_hash IN (SELECT token_hash FROM download_tokens WHERE expires_at < ? LIMIT ?)")
      .run(before, limit).changes;
  }

  /** Downloads per UTC day for one asset, oldest first. */
  async downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>> {
    return this.db.query("SELECT day, count FROM download_counts WHERE asset_id = ? ORDER BY day").all(assetId) as Array<{ day: string; count: number }>;
  }
}
