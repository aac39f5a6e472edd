/** The usage ledger: one row per gateway request, and the per-key running totals, written together. */
import type { Database } from "bun:sqlite";

export interface LedgerEntry {
  ts: number;
  requestId: string;
  keyId: string | null;
  model: string;
  endpoint: string;
  status: number;
  errorCode: string | null;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  cost: number;
  durationMs: number;
  upstreamTtfbMs: number | null;
}

export interface UsagePoint {
  bucket: number;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

export interface LatencyPoint {
  bucket: number;
  /** null when no request of the bucket reached the upstream. */
  avgTtfbMs: number | null;
  maxTtfbMs: number | null;
  avgDurationMs: number;
}

export class LedgerStore {
  private readonly insert;
  private readonly bumpTotals;

  constructor(private readonly db: Database) {
    this.insert = db.query(
      `INSERT INTO usage_ledger (ts, request_id, key_id, model, endpoint, status, error_code, input_tokens,
         output_tokens, reasoning_tokens, cached_tokens, cost_micros, duration_ms, upstream_ttfb_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.bumpTotals = db.query(
      `UPDATE key_usage SET requests = requests + ?, input_tokens = input_tokens + ?,
         output_tokens = output_tokens + ?, spent_micros = spent_micros + ? WHERE key_id = ?`,
    );
  }

  /** Writes a batch in one transaction (used through GroupCommit). */
  writeBatch(entries: LedgerEntry[]): void {
    // One totals update per key per batch, not per row: a batch under load is mostly a few busy keys.
    const totals = new Map<string, { requests: number; input: number; output: number; micros: number }>();
    this.db.transaction(() => {
      for (const e of entries) {
        const micros = Math.round(e.cost * 1_000_000);
        // Whole milliseconds: callers may compute `ts` from performance.now() deltas (fractional).
        this.insert.run(
          Math.round(e.ts), e.requestId, e.keyId, e.model, e.endpoint, e.status, e.errorCode, e.inputTokens,
          e.outputTokens, e.reasoningTokens, e.cachedTokens, micros, e.durationMs, e.upstreamTtfbMs,
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
  series(since: number, bucketMs: number, keyId?: string): UsagePoint[] {
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
  latencySeries(since: number, bucketMs: number): LatencyPoint[] {
    return this.db
      .query(
        `SELECT CAST(ts / ?1 AS INTEGER) * ?1 AS bucket, AVG(upstream_ttfb_ms) AS avgTtfbMs, MAX(upstream_ttfb_ms) AS maxTtfbMs,
           AVG(duration_ms) AS avgDurationMs
         FROM usage_ledger WHERE ts >= ?2 GROUP BY bucket ORDER BY bucket`,
      )
      .all(bucketMs, since) as LatencyPoint[];
  }

  recent(limit: number, keyId?: string): LedgerEntry[] {
    return this.db
      .query(
        `SELECT ts, request_id AS requestId, key_id AS keyId, model, endpoint, status, error_code AS errorCode,
           input_tokens AS inputTokens, output_tokens AS outputTokens, reasoning_tokens AS reasoningTokens,
           cached_tokens AS cachedTokens, cost_micros / 1000000.0 AS cost, duration_ms AS durationMs,
           upstream_ttfb_ms AS upstreamTtfbMs
         FROM usage_ledger WHERE (?2 IS NULL OR key_id = ?2) ORDER BY id DESC LIMIT ?1`,
      )
      .all(limit, keyId ?? null) as LedgerEntry[];
  }
}
