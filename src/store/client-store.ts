/** SQL of the clients table (one row per client id) and of the per-minute online series. */
import type { Database } from "bun:sqlite";
import type { ClientGroup, OnlineSample } from "../site/client-stats.ts";
import type { MergedHeartbeat } from "../site/heartbeat-input.ts";

/**
 * Rows folded per transaction: large enough to share pages between clients, small enough that one transaction
 * holds the event loop for only a few milliseconds (about 10 µs a row).
 */
export const FOLD_CHUNK = 2048;

export class ClientStore {
  private readonly upsert;

  constructor(private readonly db: Database) {
    // A field the client did not send (NULL) keeps the stored value; first_seen is never moved.
    this.upsert = db.query(
      `INSERT INTO clients (client_id, first_seen, last_seen, app, version, platform, arch, runtime, locale, count)
       VALUES ($clientId, $firstAt, $at, COALESCE($app, ''), COALESCE($version, ''), COALESCE($platform, ''),
               COALESCE($arch, ''), COALESCE($runtime, ''), COALESCE($locale, ''), $count)
       ON CONFLICT (client_id) DO UPDATE SET
         first_seen = MIN(first_seen, $firstAt),
         last_seen  = MAX(last_seen, $at),
         app        = CASE WHEN $at >= last_seen THEN COALESCE($app, app) ELSE app END,
         version    = CASE WHEN $at >= last_seen THEN COALESCE($version, version) ELSE version END,
         platform   = CASE WHEN $at >= last_seen THEN COALESCE($platform, platform) ELSE platform END,
         arch       = CASE WHEN $at >= last_seen THEN COALESCE($arch, arch) ELSE arch END,
         runtime    = CASE WHEN $at >= last_seen THEN COALESCE($runtime, runtime) ELSE runtime END,
         locale     = CASE WHEN $at >= last_seen THEN COALESCE($locale, locale) ELSE locale END,
         count      = count + $count`,
    );
  }

  /**
   * Appends a batch of heartbeats to the journal in one transaction (called through GroupCommit): one fsync
   * serves every heartbeat in it, and the rows land together at the journal's end.
   */
  appendBatch(entries: readonly MergedHeartbeat[]): void {
    const append = this.db.query(
      "INSERT INTO heartbeat_journal (client_id, first_at, at, app, version, platform, arch, runtime, locale, count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.db.transaction(() => {
      for (const e of entries) append.run(e.clientId, e.firstAt, e.at, e.app, e.version, e.platform, e.arch, e.runtime, e.locale, e.count);
    })();
  }

  /**
   * Moves journalled heartbeats into `clients`, up to `chunk` rows per transaction, until the journal is empty.
   * Every read of `clients` folds first, so readers (another process too) see every acknowledged heartbeat.
   * At most `maxChunks` transactions (a server folding in the background yields between them). Returns the
   * rows folded.
   */
  fold(chunk = FOLD_CHUNK, maxChunks = Number.POSITIVE_INFINITY): number {
    const take = this.db.query(
      `SELECT id, client_id AS clientId, first_at AS firstAt, at, app, version, platform, arch, runtime, locale, count
       FROM heartbeat_journal ORDER BY id LIMIT ?`,
    );
    const drop = this.db.query("DELETE FROM heartbeat_journal WHERE id <= ?");
    let total = 0;
    for (let chunks = 0; chunks < maxChunks; chunks++) {
      const folded = this.db
        .transaction(() => {
          const rows = take.all(chunk) as Array<MergedHeartbeat & { id: number }>;
          if (rows.length === 0) return 0;
          for (const { id: _, ...row } of rows) this.upsert.run(row);
          drop.run(rows[rows.length - 1]!.id);
          return rows.length;
        })
        .immediate();
      total += folded;
      if (folded < chunk) return total;
    }
    return total;
  }

  /** The whole write path in one call: append, then fold (for callers that do not batch, e.g. tests). */
  writeBatch(entries: readonly MergedHeartbeat[]): void {
    this.appendBatch(entries);
    this.fold();
  }

  onlineCount(since: number): number {
    this.fold();
    return (this.db.query("SELECT COUNT(*) AS n FROM clients WHERE last_seen >= ?").get(since) as { n: number }).n;
  }

  /** Online clients grouped by every reported field: far fewer rows than clients, folded in client-stats.ts. */
  onlineGroups(since: number): ClientGroup[] {
    this.fold();
    return this.db
      .query(
        `SELECT app, version, platform, arch, runtime, locale, COUNT(*) AS clients FROM clients
         WHERE last_seen >= ? GROUP BY app, version, platform, arch, runtime, locale`,
      )
      .all(since) as ClientGroup[];
  }

  knownCount(): number {
    this.fold();
    return (this.db.query("SELECT COUNT(*) AS n FROM clients").get() as { n: number }).n;
  }

  pruneClients(seenBefore: number): number {
    this.fold();
    return this.db.query("DELETE FROM clients WHERE last_seen < ?").run(seenBefore).changes;
  }

  /** Later samples of the same minute keep the peak. */
  recordSample(minute: number, online: number): void {
    this.db
      .query("INSERT INTO online_series (minute, online) VALUES (?1, ?2) ON CONFLICT (minute) DO UPDATE SET online = MAX(online, ?2)")
      .run(minute, online);
  }

  samples(from: number, toExclusive: number): OnlineSample[] {
    return this.db
      .query("SELECT minute, online FROM online_series WHERE minute >= ? AND minute < ? ORDER BY minute")
      .all(from, toExclusive) as OnlineSample[];
  }

  pruneSeries(before: number): number {
    return this.db.query("DELETE FROM online_series WHERE minute < ?").run(before).changes;
  }
}
