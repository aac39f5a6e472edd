/**
 * The LimiterStore port: per-key rate buckets, concurrency slots, quota reservations and the quota used,
 * decided and consumed in one atomic step per admission. Implementations: InProcessLimiter (limiter.ts, the
 * embedded default) and the Redis one (store/redis/limiter.ts) that several instances share.
 */
import type { QuotaLimits } from "./rules/quota";

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** The Retry-After of a refusal no wait can help (a limit of 0): finite, as the header needs, and long. */
export const BLOCKED_RETRY_MS = 3_600_000;

export interface KeyLimits extends QuotaLimits {
  rpm: number | null;
  rpd: number | null;
  concurrency: number | null;
}

export interface Reservation {
  tokens: number;
  cost: number;
}

export type LimitCode = "quota_exceeded" | "rate_limit_rpm" | "rate_limit_rpd" | "concurrent_limit";

export interface RequestBudget {
  limit: number;
  remaining: number;
  resetMs: number;
}

export type AdmitResult =
  | { ok: true; slot: boolean; budget: RequestBudget | null }
  | {
      ok: false;
      code: LimitCode;
      retryAfterMs: number;
      /** false when no wait helps: a limit of 0 blocks the key until an operator changes it. */
      retryable: boolean;
      budget: RequestBudget | null;
    };

export interface AdmitOptions {
  /** Listing models checks rates but holds no slot and reserves no quota. */
  concurrency: boolean;
  quota: boolean;
}

/**
 * A key's quota use as the database last recorded it. `since` names the quota period (the time of the last
 * usage reset, null if never): the limiter adopts these totals when it first meets the key or when the period
 * changed, and otherwise keeps its own, which include requests settled since that record was read.
 */
export interface RecordedUsage {
  tokens: number;
  spent: number;
  since: number | null;
}

/**
 * What the durable record says a key has used, for a shared limiter whose store came back empty (a Redis
 * restarted without persistence): the quota used in the current period, and how many calls were admitted and
 * settled since `since` (ledger rows), which is what a day's request budget must not forget.
 */
export interface LimiterHistory {
  usage(keyId: string, since: number): Promise<{ tokens: number; spent: number; requests: number }>;
}

export interface LimiterStore {
  /** Decides every check, then consumes, in one atomic step (a shared backend: one script or transaction). */
  admit(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult>;
  /**
   * Ends an admitted request: its reservation becomes the usage it really had (`used`: zero when nothing was
   * produced) and its concurrency slot is freed, in one step. Safe to call once per admitted request.
   */
  settle(keyId: string, reserve: Reservation, used: Reservation, slot: boolean): void;
  inFlight(keyId: string): number;
  totalInFlight(): number;
  /** Drops what it keeps for keys that no longer exist (those with requests in flight stay until they end). */
  forget(keepIds: Set<string>): void;
  /** Stops timers and connections (after the last request settled). */
  close(): void;
}
