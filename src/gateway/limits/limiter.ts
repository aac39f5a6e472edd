/**
 * The LimiterStore seam: per-key rate buckets, concurrency slots, quota reservations and the quota used.
 * Decide-then-commit happens inside one call, so a refused request consumes nothing from any budget
 * (a Redis implementation does the same in one script). This is the in-process default.
 */
import { canTake, createBucket, msUntilFull, msUntilToken, resize, take, type TokenBucket } from "./rules/token-bucket";
import { quotaExhausted } from "./rules/quota";

export * from "./limiter-store";
import { BLOCKED_RETRY_MS, DAY_MS, MINUTE_MS, type AdmitOptions, type AdmitResult, type KeyLimits, type LimitCode, type LimiterStore, type RecordedUsage, type RequestBudget, type Reservation } from "./limiter-store";

interface KeyState {
  rpm: TokenBucket | null;
  rpd: TokenBucket | null;
  reservedTokens: number;
  reservedCost: number;
  /** Quota used in the current period: adopted from the record, then advanced by every settlement. */
  usedTokens: number;
  usedCost: number;
  /** The period the used totals belong to (RecordedUsage.since); undefined until adopted. */
  period: number | null | undefined;
  active: number;
}

function syncBucket(b: TokenBucket | null, limit: number | null, windowMs: number, now: number): TokenBucket | null {
  if (limit === null) return null;
  if (!b) return createBucket(limit, windowMs, now);
  if (b.capacity !== limit) resize(b, limit, now);
  return b;
}

function budgetOf(b: TokenBucket | null, now: number): RequestBudget | null {
  if (!b) return null;
  return { limit: b.capacity, remaining: Math.max(0, Math.floor(b.tokens)), resetMs: msUntilFull(b, now) };
}

export class InProcessLimiter implements LimiterStore {
  private readonly states = new Map<string, KeyState>();
  private inFlightTotal = 0;

  private state(keyId: string): KeyState {
    let s = this.states.get(keyId);
    if (!s) {
      s = { rpm: null, rpd: null, reservedTokens: 0, reservedCost: 0, usedTokens: 0, usedCost: 0, period: undefined, active: 0 };
      this.states.set(keyId, s);
    }
    return s;
  }

  admit(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    // Decided synchronously, so no other admission can interleave between the checks and the taking.
    return Promise.resolve(this.decide(keyId, limits, recorded, reserve, now, opts));
  }

  private decide(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): AdmitResult {
    const s = this.state(keyId);
    // The record lags behind settlements not yet written (and a key-cache reload re-reads it): only a new
    // period (a usage reset) replaces what this limiter counted itself.
    if (s.period === undefined || s.period !== recorded.since) {
      s.usedTokens = recorded.tokens;
      s.usedCost = recorded.spent;
      s.period = recorded.since;
    }
    s.rpm = syncBucket(s.rpm, limits.rpm, MINUTE_MS, now);
    s.rpd = syncBucket(s.rpd, limits.rpd, DAY_MS, now);

    const headerBucket = s.rpm ?? s.rpd;
    const refuse = (code: LimitCode, retryAfterMs: number, retryable = true): AdmitResult => ({
      ok: false,
      code,
      retryAfterMs,
      retryable,
      budget: budgetOf(headerBucket, now),
    });
    // A limit of 0 is refused at input, but an older database may hold one: it blocks, and says so.
    const blocked = (code: LimitCode) => refuse(code, BLOCKED_RETRY_MS, false);

    // The spec's order: quota, RPM, RPD, concurrency. Decide everything before consuming anything.
    if (opts.quota) {
      const q = quotaExhausted(limits, {
        usedTokens: s.usedTokens,
        spent: s.usedCost,
        reservedTokens: s.reservedTokens,
        reservedCost: s.reservedCost,
      });
      if (q) return refuse("quota_exceeded", 0);
    }
    if (s.rpm && !(s.rpm.capacity > 0)) return blocked("rate_limit_rpm");
    if (s.rpm && !canTake(s.rpm, now)) return refuse("rate_limit_rpm", msUntilToken(s.rpm, now));
    if (s.rpd && !(s.rpd.capacity > 0)) return blocked("rate_limit_rpd");
    if (s.rpd && !canTake(s.rpd, now)) return refuse("rate_limit_rpd", msUntilToken(s.rpd, now));
    // Counted against the limit in force now: every request of the key in flight, including those admitted while
    // the limit was higher or unset, so lowering or setting it never lets more run than it allows.
    const limit = limits.concurrency;
    const wantsSlot = opts.concurrency && limit !== null;
    if (wantsSlot && !(limit > 0)) return blocked("concurrent_limit");
    if (wantsSlot && s.active >= limit) return refuse("concurrent_limit", 1000);

    if (s.rpm) take(s.rpm, now);
    if (s.rpd) take(s.rpd, now);
    if (opts.quota) {
      s.reservedTokens += reserve.tokens;
      s.reservedCost += reserve.cost;
    }
    if (opts.concurrency) {
      s.active += 1;
      this.inFlightTotal += 1;
    }
    return { ok: true, slot: wantsSlot, budget: budgetOf(headerBucket, now) };
  }

  settle(keyId: string, reserve: Reservation, used: Reservation, slot: boolean): void {
    const s = this.states.get(keyId);
    if (!s) return;
    s.usedTokens += used.tokens;
    s.usedCost += used.cost;
    s.reservedTokens = Math.max(0, s.reservedTokens - reserve.tokens);
    s.reservedCost = Math.max(0, s.reservedCost - reserve.cost);
    if (s.active > 0) {
      s.active -= 1;
      this.inFlightTotal -= 1;
    }
  }

  inFlight(keyId: string): number {
    return this.states.get(keyId)?.active ?? 0;
  }

  totalInFlight(): number {
    return this.inFlightTotal;
  }

  close(): void {}

  /** Drops the state of keys that no longer exist. */
  forget(keepIds: Set<string>): void {
    for (const id of this.states.keys()) if (!keepIds.has(id) && this.states.get(id)!.active === 0) this.states.delete(id);
  }
}
