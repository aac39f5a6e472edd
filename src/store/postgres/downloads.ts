/** One-time download links (as hashes) and download counts in PostgreSQL; each decision is one atomic statement. */
import type { SQL } from "bun";
import type { DownloadRepository, TokenRecord } from "../../site/downloads/download-repository";
import { num, numOrNull } from "./db";

export class PostgresDownloadRepository implements DownloadRepository {
  constructor(private readonly sql: SQL) {}

  async insertToken(t: Omit<TokenRecord, "consumedAt" | "counted">): Promise<void> {
    await this.sql`INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at)
                   VALUES (${t.tokenHash}, ${t.assetId}, ${t.sha256}, ${t.createdAt}, ${t.expiresAt})`;
  }

  async getToken(tokenHash: string): Promise<TokenRecord | null> {
    const [r] = await this.sql`SELECT * FROM download_tokens WHERE token_hash = ${tokenHash}`;
    if (!r) return null;
    return {
      tokenHash: r.token_hash,
      assetId: num(r.asset_id),
      sha256: r.sha256,
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      consumedAt: numOrNull(r.consumed_at),
      counted: r.counted === true,
    };
  }

  async consumeToken(tokenHash: string, at: number): Promise<boolean> {
    const rows = await this.sql`UPDATE download_tokens SET consumed_at = ${at} WHERE token_hash = ${tokenHash} AND consumed_at IS NULL RETURNING 1`;
    return rows.length === 1;
  }

  async countDownloadOnce(tokenHash: string, assetId: number, at: number): Promise<boolean> {
    const day = new Date(at).toISOString().slice(0, 10);
    // One statement: the token's flag and the day's count move together, and only for the first caller.
    const rows = await this.sql`
      WITH won AS (UPDATE download_tokens SET counted = true WHERE token_hash = ${tokenHash} AND NOT counted RETURNING 1)
      INSERT INTO download_counts (asset_id, day, count) SELECT ${assetId}, ${day}, 1 FROM won
      ON CONFLICT (asset_id, day) DO UPDATE SET count = download_counts.count + 1
      RETURNING 1`;
    return rows.length === 1;
  }

  async purgeTokens(before: number): Promise<number> {
    return (await this.sql`DELETE FROM download_tokens WHERE expires_at < ${before} RETURNING 1`).length;
  }

  async downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>> {
    const rows = await this.sql`SELECT day, count FROM download_counts WHERE asset_id = ${assetId} ORDER BY day`;
    return rows.map((r: { day: string; count: unknown }) => ({ day: r.day, count: num(r.count) }));
  }
}
