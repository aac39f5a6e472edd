/** SQL of the clients table (one row per client id) and of the per-minute online series. */
import type { Database } from "bun:sqlite";
import type { ClientGroup, OnlineSample } from "../site/client-stats.ts";
import type { MergedHeartbeat } from "../site/heartbeat-input.ts";

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

  /** One transaction per batch (called through GroupCommit): one fsync serves every heartbeat in it. */
  writeBatch(entries: readonly MergedHeartbeat[]): void {
    this.db.transaction(() => {
      for (const e of entries) {
        this.upsert.run({
          clientId: e.clientId,
          firstAt: e.firstAt,
          at: e.at,
          app: e.app,
          version: e.version,
          platform: e.platform,
          arch: e.arch,
          runtime: e.runtime,
          locale: e.locale,
          count: e.count,
        });
      }
    })();
  }

  onlineCount(since: number): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM clients WHERE last_seen >= ?").get(since) as { n: number }).n;
  }

  /** Online clients grouped by every reported field: far fewer rows than clients, folded in client-stats.ts. */
  onlineGroups(since: number): ClientGroup[] {
    return this.db
      .query(
        `SELECT app, version, platform, arch, runtime, locale, COUNT(*) AS clients FROM clients
         WHERE last_seen >= ? GROUP BY app, version, platform, arch, runtime, locale`,
      )
      .all(since) as ClientGroup[];
  }

  knownCount(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM clients").get() as { n: number }).n;
  }

  pruneClients(seenBefore: number): number {
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
