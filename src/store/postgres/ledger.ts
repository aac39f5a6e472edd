/**
 * The usage ledger in PostgreSQL: rows and per-key totals written in one transaction per batch. Rows that
 * finish together share one commit (group commit, one batch in flight), so a burst costs a few round trips,
 * not one transaction per request; `record` resolves only once its batch committed.
 */
import type { SQL } from "bun";
import type { LatencyPoint, LedgerEntry, UsageLedger, UsagePoint } from "../../gateway/usage/ledger-repository";
import { GroupCommit } from "../../state/group-commit";
import { num, numOrNull } from "./db";

const BATCH = { maxBatch: 256, maxDelayMs: 0 };
const MICROS = 1_000_000;

type Row = Record<string, unknown>;

function toRow(e: LedgerEntry) {
  return {
    // Whole milliseconds: callers may compute `ts` from performance.now() deltas (fractional).
    ts: Math.round(e.ts),
    request_id: e.requestId,
    key_id: e.keyId,
    model: e.model,
    endpoint: e.endpoint,
    status: e.status,
    error_code: e.errorCode,
    input_tokens: e.inputTokens,
    output_tokens: e.outputTokens,
    reasoning_tokens: e.reasoningTokens,
    cached_tokens: e.cachedTokens,
    cost_micros: Math.round(e.cost * MICROS),
    estimated: e.estimated === true,
    duration_ms: Math.round(e.durationMs),
    upstream_ttfb_ms: e.upstreamTtfbMs === null ? null : Math.round(e.upstreamTtfbMs),
    account: e.account ?? null,
  };
}

export class PostgresUsageLedger implements UsageLedger {
  private readonly writer: GroupCommit<LedgerEntry>;

  constructor(private readonly sql: SQL) {
    this.writer = new GroupCommit<LedgerEntry>((items) => this.writeBatch(items), BATCH);
  }

  record(entry: LedgerEntry): Promise<void> {
    return this.writer.add(entry);
  }

  recordMany(entries: readonly LedgerEntry[]): Promise<void> {
    return this.writeBatch(entries);
  }

  async probe(): Promise<void> {
    // A row written and deleted in one committed transaction: it needs what a ledger row needs.
    await this.sql.begin(async (tx) => {
      const [row] = await tx`INSERT INTO usage_ledger (ts, request_id, endpoint, status) VALUES (0, ${`probe_${crypto.randomUUID()}`}, 'probe', 0) RETURNING id`;
      await tx`DELETE FROM usage_ledger WHERE id = ${row.id}`;
    });
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

  private async writeBatch(entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map(toRow);
    // The pool runs a transaction again when its connection was lost (db.ts): should the lost one have
    // committed after all, its rows are skipped by their unique request id, and the totals count only the rows
    // this attempt inserted.
    await this.sql.begin(async (tx) => {
      const inserted: Row[] = [];
      // Bun's helper writes one multi-row INSERT; chunks keep it under PostgreSQL's 65,535 parameters.
      for (let i = 0; i < rows.length; i += 1000) {
        inserted.push(...(await tx`INSERT INTO usage_ledger ${tx(rows.slice(i, i + 1000))} ON CONFLICT (request_id) DO NOTHING
                                  RETURNING key_id, input_tokens, output_tokens, cost_micros`));
      }
      // One totals update per key per batch: a batch under load is mostly a few busy keys.
      const totals = new Map<string, { requests: number; input: number; output: number; micros: number }>();
      for (const r of inserted) {
        const keyId = r.key_id as string | null;
        if (!keyId) continue;
        const t = totals.get(keyId) ?? { requests: 0, input: 0, output: 0, micros: 0 };
        t.requests += 1;
        t.input += num(r.input_tokens);
        t.output += num(r.output_tokens);
        t.micros += num(r.cost_micros);
        totals.set(keyId, t);
      }
      // Keys in a fixed order, so two instances' batches never wait on each other's row locks in a cycle.
      for (const [keyId, t] of [...totals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        await tx`UPDATE key_usage SET requests = requests + ${t.requests}, input_tokens = input_tokens + ${t.input},
                   output_tokens = output_tokens + ${t.output}, spent_micros = spent_micros + ${t.micros} WHERE key_id = ${keyId}`;
      }
    });
  }

  async series(since: number, bucketMs: number, keyId?: string): Promise<UsagePoint[]> {
    const rows = await this.sql`
      SELECT (ts / ${bucketMs}::bigint) * ${bucketMs}::bigint AS bucket, COUNT(*) AS requests,
        SUM((status >= 400)::int) AS errors, SUM(input_tokens) AS input, SUM(output_tokens) AS output, SUM(cost_micros) AS micros
      FROM usage_ledger WHERE ts >= ${Math.floor(since)}::bigint AND (${keyId ?? null}::text IS NULL OR key_id = ${keyId ?? null}::text)
      GROUP BY 1 ORDER BY 1`;
    return rows.map((r: Row) => ({
      bucket: num(r.bucket),
      requests: num(r.requests),
      errors: num(r.errors),
      inputTokens: num(r.input),
      outputTokens: num(r.output),
      cost: num(r.micros) / MICROS,
    }));
  }

  async latencySeries(since: number, bucketMs: number): Promise<LatencyPoint[]> {
    const rows = await this.sql`
      SELECT (ts / ${bucketMs}::bigint) * ${bucketMs}::bigint AS bucket, AVG(upstream_ttfb_ms)::float8 AS avg_ttfb,
        MAX(upstream_ttfb_ms) AS max_ttfb, AVG(duration_ms)::float8 AS avg_duration
      FROM usage_ledger WHERE ts >= ${Math.floor(since)}::bigint GROUP BY 1 ORDER BY 1`;
    return rows.map((r: Row) => ({
      bucket: num(r.bucket),
      avgTtfbMs: numOrNull(r.avg_ttfb),
      maxTtfbMs: numOrNull(r.max_ttfb),
      avgDurationMs: num(r.avg_duration),
    }));
  }

  async recent(limit: number, keyId?: string): Promise<LedgerEntry[]> {
    const rows = await this.sql`
      SELECT * FROM usage_ledger WHERE (${keyId ?? null}::text IS NULL OR key_id = ${keyId ?? null}::text)
      ORDER BY id DESC LIMIT ${limit}`;
    return rows.map((r: Row) => ({
      ts: num(r.ts),
      requestId: r.request_id as string,
      keyId: r.key_id as string | null,
      model: r.model as string,
      endpoint: r.endpoint as string,
      status: num(r.status),
      errorCode: r.error_code as string | null,
      inputTokens: num(r.input_tokens),
      outputTokens: num(r.output_tokens),
      reasoningTokens: num(r.reasoning_tokens),
      cachedTokens: num(r.cached_tokens),
      cost: num(r.cost_micros) / MICROS,
      durationMs: num(r.duration_ms),
      upstreamTtfbMs: numOrNull(r.upstream_ttfb_ms),
      estimated: r.estimated === true,
      account: (r.account as string | null) ?? null,
    }));
  }
}
