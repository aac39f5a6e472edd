/**
 * Clients in SQLite: reports are appended to a journal (one insert per report, one fsync per batch) and folded
 * into `clients` (one row per client id) in large chunks that share pages; plus the per-minute online series.
 */
import type { Database } from "bun:sqlite";
import type { ClientGroup, ClientReport, ClientRepository, FoldResult, OnlineSample } from "../../site/heartbeats/client-repository";

/** Rows folded per transaction: small enough that one holds the event loop only a few milliseconds (~10 µs a row). */
export const FOLD_CHUNK = 512;

export class SqliteClientRepository implements ClientRepository {
  private readonly upsert;
  private readonly versionOf;

  constructor(private readonly db: Database) {
    // A field the client did not send (NULL) keeps the stored value; first_seen is never moved. Bound by position
    // (?1 client id, ?2 first, ?3 at, ?4-?9 fields, ?10 count), straight from a journal row's values.
    this.upsert = db.query(
      `INSERT INTO clients (client_id, first_seen, last_seen, app, version, platform, arch, runtime, locale, count)
       VALUES (?1, ?2, ?3, COALESCE(?4, ''), COALESCE(?5, ''), COALESCE(?6, ''), COALESCE(?7, ''), COALESCE(?8, ''), COALESCE(?9, ''), ?10)
       ON CONFLICT (client_id) DO UPDATE SET
         first_seen = MIN(first_seen, ?2),
         last_seen  = MAX(last_seen, ?3),
         app        = CASE WHEN ?3 >= last_seen THEN COALESCE(?4, app) ELSE app END,
         version    = CASE WHEN ?3 >= last_seen THEN COALESCE(?5, version) ELSE version END,
         platform   = CASE WHEN ?3 >= last_seen THEN COALESCE(?6, platform) ELSE platform END,
         arch       = CASE WHEN ?3 >= last_seen THEN COALESCE(?7, arch) ELSE arch END,
         runtime    = CASE WHEN ?3 >= last_seen THEN COALESCE(?8, runtime) ELSE runtime END,
         locale     = CASE WHEN ?3 >= last_seen THEN COALESCE(?9, locale) ELSE locale END,
         count      = count + ?10`,
    );
    this.versionOf = db.query("SELECT version FROM clients WHERE client_id = ?");
  }

  async reportedVersion(clientId: string): Promise<string | null> {
    const row = this.versionOf.get(clientId) as { version: string } | null;
    return row?.version || null;
  }

  /**
   * Appends a batch of heartbeats to the journal in one transaction (called through GroupCommit): one fsync
   * serves every heartbeat in it, and the rows land together at the journal's end.
   */
  async append(entries: readonly ClientReport[]): Promise<void> {
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
   * rows folded, and whether a full last chunk may have left more behind.
   */
  async fold(maxChunks = Number.POSITIVE_INFINITY): Promise<FoldResult> {
    return this.foldNow(FOLD_CHUNK, maxChunks);
  }

  /** `fold`, synchronously (readers fold first within their own call); `chunk` rows per transaction. */
  foldNow(chunk = FOLD_CHUNK, maxChunks = Number.POSITIVE_INFINITY): FoldResult {
    const take = this.db.query(
      "SELECT client_id, first_at, at, app, version, platform, arch, runtime, locale, count, id FROM heartbeat_journal ORDER BY id LIMIT ?",
    );
    const drop = this.db.query("DELETE FROM heartbeat_journal WHERE id <= ?");
    // Nothing journalled (the usual case between heartbeats): no write lock, no pragma.
    if (this.db.query("SELECT 1 FROM heartbeat_journal LIMIT 1").get() === null) return { moved: 0, more: false };
    let total = 0;
    // A fold needs no fsync of its own: it moves rows within the database in one transaction, so losing it to a
    // power cut loses nothing (the journal rows come back with it), and the next heartbeat commit's fsync makes
    // it durable anyway (the WAL is written in order). Synchronous JS: nothing else runs on this connection meanwhile.
    // (Inside a caller's transaction the level cannot change, and that transaction's commit decides anyway.)
    const relax = !this.db.inTransaction;
    if (relax) this.db.exec("PRAGMA synchronous = NORMAL");
    try {
      for (let chunks = 0; chunks < maxChunks; chunks++) {
        const folded = this.db
          .transaction(() => {
            const rows = take.values(chunk) as Array<Array<string | number | null>>;
            if (rows.length === 0) return 0;
            for (const r of rows) this.upsert.run(r[0]!, r[1]!, r[2]!, r[3]!, r[4]!, r[5]!, r[6]!, r[7]!, r[8]!, r[9]!);
            drop.run(rows[rows.length - 1]![10]!);
            return rows.length;
          })
          .immediate();
        total += folded;
        if (folded < chunk) return { moved: total, more: false };
      }
      return { moved: total, more: true };
    } finally {
      if (relax) this.db.exec("PRAGMA synchronous = FULL");
    }
  }

  async onlineCount(since: number): Promise<number> {
    this.foldNow();
    return (this.db.query("SELECT COUNT(*) AS n FROM clients WHERE last_seen >= ?").get(since) as { n: number }).n;
  }

  /** Online clients grouped by every reported field: far fewer rows than clients, folded in client-stats.ts. */
  async onlineGroups(since: number): Promise<ClientGroup[]> {
    this.foldNow();
    return this.db
      .query(
        `SELECT app, version, platform, arch, runtime, locale, COUNT(*) AS clients FROM clients
         WHERE last_seen >= ? GROUP BY app, version, platform, arch, runtime, locale`,
      )
      .all(since) as ClientGroup[];
  }

  async knownCount(): Promise<number> {
    this.foldNow();
    return (this.db.query("SELECT COUNT(*) AS n FROM clients").get() as { n: number }).n;
  }

  async pruneClients(seenBefore: number): Promise<number> {
    this.foldNow();
    return this.db.query("DELETE FROM clients WHERE last_seen < ?").run(seenBefore).changes;
  }

  async recordSamples(samples: readonly OnlineSample[]): Promise<void> {
    const insert = this.db.query(
      "INSERT INTO online_series (minute, online) VALUES (?1, ?2) ON CONFLICT (minute) DO UPDATE SET online = MAX(online, ?2)",
    );
    this.db.transaction(() => {
      for (const s of samples) insert.run(s.minute, s.online);
    })();
  }

  async samples(from: number, toExclusive: number): Promise<OnlineSample[]> {
    return this.db
      .query("SELECT minute, online FROM online_series WHERE minute >= ? AND minute < ? ORDER BY minute")
      .all(from, toExclusive) as OnlineSample[];
  }

  async pruneSeries(before: number): Promise<number> {
    return this.db.query("DELETE FROM online_series WHERE minute < ?").run(before).changes;
  }
}
