/**
 * The usage ledger in SQLite: rows and per-key totals written in one transaction per batch. Rows recorded
 * together share one commit (group commit), so one fsync serves a whole burst of finished requests.
 */
import type { Database } from "bun:sqlite";
import type { LatencyPoint, LedgerEntry, UsageLedger, UsagePoint } from "../../gateway/usage/ledger-repository";
import { GroupCommit } from "../../state/group-commit";

/** 256 rows is a few milliseconds of writing: long enough to share an fsync, short enough not to stall streams. */
const BATCH = { maxBatch: 256, maxDelayMs: 0 };

const PROBE_REQUEST_ID = `probe-${"p".repeat(8192)}`;

export class SqliteUsageLedger implements UsageLedger {
  private readonly insert;
  private readonly bumpTotals;
  private readonly writer: GroupCommit<LedgerEntry>;

  constructor(private readonly db: Database) {
    this.insert = db.query(
      `INSERT INTO usage_ledger (ts, request_id, key_id, model, endpoint, status, error_code, input_tokens,
         output_tokens, reasoning_tokens, cached_tokens, cost_micros, duration_ms, upstream_ttfb_ms, estimated, account)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.bumpTotals = db.query(
      `UPDATE key_usage SET requests = requests + ?, input_tokens = input_tokens + ?,
         output_tokens = output_tokens + ?, spent_micros = spent_micros + ? WHERE key_id = ?`,
    );
    this.writer = new GroupCommit<LedgerEntry>((items) => this.writeBatch(items), BATCH);
  }

  record(entry: LedgerEntry): Promise<void> {
    return this.writer.add(entry);
  }

  async recordMany(entries: readonly LedgerEntry[]): Promise<void> {
    this.writeBatch(entries);
  }

  async probe(): Promise<void> {
    // A row written and deleted in one transaction: its pages still go through the WAL, so a full disk fails here.
    // Its id is longer than a page, so the row needs pages of its own: a database with room left in a page but
    // none for a new one (the state in which the next batch of rows fails) fails the probe too.
    this.db.transaction(() => {
      const { id } = this.db
        .query("INSERT INTO usage_ledger (ts, request_id, endpoint, status) VALUES (0, ?, 'probe', 0) RETURNING id")
        .get(PROBE_REQUEST_ID) as { id: number };
      this.db.query("DELETE FROM usage_ledger WHERE id = ?").run(id);
    })();
  }

  async flush(): Promise<void> {
    await this.writer.flush();
  }

  get pending(): number {
    return this.writer.pending;
  }

  async close(): Promise<void> {
    await this.writer.close();
  }

  /** Writes a batch in one transaction. */
  private writeBatch(entries: readonly LedgerEntry[]): void {
    // One totals update per key per batch, not per row: a batch under load is mostly a few busy keys.
    const totals = new Map<string, { requests: number; input: number; output: number; micros: number }>();
    this.db.transaction(() => {
      for (const e of entries) {
        const micros = Math.round(e.cost * 1_000_000);
        // Whole milliseconds: callers may compute `ts` from performance.now() deltas (fractional).
        this.insert.run(
          Math.round(e.ts), e.requestId, e.keyId, e.model, e.endpoint, e.status, e.errorCode, e.inputTokens,
          e.outputTokens, e.reasoningTokens, e.cachedTokens, micros, e.durationMs, e.upstreamTtfbMs, e.estimated ? 1 : 0,
          e.account ?? null,
        );
        if (!e.keyId) continue;
        const t = totals.get(e.keyId) ?? { requests: 0, input: 0, output: 0, micros: 0 };
        t.requests += 1;
        t.input += e.inputTokens;
        t.output += e.outputTokens;
        t.micros += micros;
        totals.set(e.keyId, t);
      }
      for (const [keyId, t] of totals) this.bumpTotals.run(t.requests, t.input, t.output, t.micros, keyId);
    })();
  }

  /**
   * Usage grouped in buckets of `bucketMs` since `since`, for one key or all keys. The CAST floors rows
   * written with a fractional `ts` by earlier versions, so they land in their bucket too.
   */
  async series(since: number, bucketMs: number, keyId?: string): Promise<UsagePoint[]> {
    const rows = this.db
      .query(
        `SELECT CAST(ts / ?1 AS INTEGER) * ?1 AS bucket, COUNT(*) AS requests, SUM(status >= 400) AS errors,
           SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens, SUM(cost_micros) AS micros
         FROM usage_ledger WHERE ts >= ?2 AND (?3 IS NULL OR key_id = ?3) GROUP BY bucket ORDER BY bucket`,
      )
      .all(bucketMs, since, keyId ?? null) as Array<UsagePoint & { micros: number }>;
    return rows.map(({ micros, ...r }) => ({ ...r, cost: micros / 1_000_000 }));
  }

  /** Upstream time to first byte and total duration per bucket, for the back office's latency chart. */
  async latencySeries(since: number, bucketMs: number): Promise<LatencyPoint[]> {
    return this.db
      .query(
        `SELECT CAST(ts / ?1 AS INTEGER) * ?1 AS bucket, AVG(upstream_ttfb_ms) AS avgTtfbMs, MAX(upstream_ttfb_ms) AS maxTtfbMs,
           AVG(duration_ms) AS avgDurationMs
         FROM usage_ledger WHERE ts >= ?2 GROUP BY bucket ORDER BY bucket`,
      )
      .all(bucketMs, since) as LatencyPoint[];
  }

  async recent(limit: number, keyId?: string): Promise<LedgerEntry[]> {
    return this.db
      .query(
        `SELECT ts, request_id AS requestId, key_id AS keyId, model, endpoint, status, error_code AS errorCode,
           input_tokens AS inputTokens, output_tokens AS outputTokens, reasoning_tokens AS reasoningTokens,
           cached_tokens AS cachedTokens, cost_micros / 1000000.0 AS cost, duration_ms AS durationMs,
           upstream_ttfb_ms AS upstreamTtfbMs, estimated, account
         FROM usage_ledger WHERE (?2 IS NULL OR key_id = ?2) ORDER BY id DESC LIMIT ?1`,
      )
      .all(limit, keyId ?? null)
      .map((r) => ({ ...(r as LedgerEntry), estimated: (r as { estimated: number }).estimated === 1 }));
  }
}
