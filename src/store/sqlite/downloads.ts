/**
 * One-time download links (stored as hashes) and the download counts they produce, in SQLite: a count per
 * asset per UTC day, taken once per link whatever number of ranged GETs it serves.
 */
import type { Database } from "bun:sqlite";
import type { DownloadRepository, TokenRecord } from "../../site/downloads/download-repository";

export class SqliteDownloadRepository implements DownloadRepository {
  constructor(private readonly db: Database) {}

  async insertToken(t: Omit<TokenRecord, "consumedAt" | "counted">): Promise<void> {
    this.db
      .query("INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run(t.tokenHash, t.assetId, t.sha256, t.createdAt, t.expiresAt);
  }

  async getToken(tokenHash: string): Promise<TokenRecord | null> {
    const r = this.db.query("SELECT * FROM download_tokens WHERE token_hash = ?").get(tokenHash) as {
      token_hash: string;
      asset_id: number;
      sha256: string;
      created_at: number;
      expires_at: number;
      consumed_at: number | null;
      counted: number;
    } | null;
    if (!r) return null;
    return {
      tokenHash: r.token_hash,
      assetId: r.asset_id,
      sha256: r.sha256,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      consumedAt: r.consumed_at,
      counted: r.counted === 1,
    };
  }

  /** Marks the token used; false when another request got there first (one atomic UPDATE decides). */
  async consumeToken(tokenHash: string, at: number): Promise<boolean> {
    return this.db.query("UPDATE download_tokens SET consumed_at = ? WHERE token_hash = ? AND consumed_at IS NULL").run(at, tokenHash).changes === 1;
  }

  /**
   * Counts one download for the token's asset the first time a GET served bytes through it, so a client that
   * fetches a file in many ranges still counts once. Returns whether this call counted.
   */
  async countDownloadOnce(tokenHash: string, assetId: number, at: number): Promise<boolean> {
    return this.db.transaction(() => {
      const won = this.db.query("UPDATE download_tokens SET counted = 1 WHERE token_hash = ? AND counted = 0").run(tokenHash).changes === 1;
      if (!won) return false;
      const day = new Date(at).toISOString().slice(0, 10);
      this.db
        .query("INSERT INTO download_counts (asset_id, day, count) VALUES (?, ?, 1) ON CONFLICT(asset_id, day) DO UPDATE SET count = count + 1")
        .run(assetId, day);
      return true;
    }).immediate();
  }

  /** Forgets tokens that expired before `before` (they answer 404 afterwards instead of 410). */
  async purgeTokens(before: number): Promise<number> {
    return this.db.query("DELETE FROM download_tokens WHERE expires_at < ?").run(before).changes;
  }

  /** Downloads per UTC day for one asset, oldest first. */
  async downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>> {
    return this.db.query("SELECT day, count FROM download_counts WHERE asset_id = ? ORDER BY day").all(assetId) as Array<{ day: string; count: number }>;
  }
}
