/**
 * The usage ledger: one row per gateway request, and the per-key running totals that rows add to, always
 * written together. Implementations batch concurrent writes (group commit); `record` resolves only once the
 * row is durable, which is what lets the gateway hold a stream's last bytes until its request is billed.
 */
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
  /** The upstream account that served the call (its configured name); null when none did. Absent counts as null. */
  account?: string | null;
  /** The tokens are Gantry's estimate, not the upstream's figures (a request cut before it reported usage). */
  estimated?: boolean;
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

export interface UsageLedger {
  /** Appends the row and adds it to its key's totals; resolves once committed. */
  record(entry: LedgerEntry): Promise<void>;
  /** Appends many rows in one commit (imports, the demo's history). */
  recordMany(entries: readonly LedgerEntry[]): Promise<void>;
  /** Resolves once every row recorded before the call is committed (readers call it first). */
  flush(): Promise<void>;
  /** Usage in buckets of `bucketMs` since `since`, for one key or all. */
  series(since: number, bucketMs: number, keyId?: string): Promise<UsagePoint[]>;
  /** Upstream time to first byte and total duration per bucket. */
  latencySeries(since: number, bucketMs: number): Promise<LatencyPoint[]>;
  /** The newest rows first, for one key or all. */
  recent(limit: number, keyId?: string): Promise<LedgerEntry[]>;
  /**
   * A durable write that needs what a row needs (space, a working database) and leaves nothing behind: succeeds
   * once rows can be written again after a failure.
   */
  probe(): Promise<void>;
  /** Rows waiting to be committed (a gauge). */
  readonly pending: number;
  /** Commits what is waiting and refuses further rows. */
  close(): Promise<void>;
}
