/**
 * What the pool reports, counted: per account in this process (the numbers `gantry upstreams list`, the admin API
 * and the back office show), and passed on to the metrics (Prometheus's per-account series). Counting is a few
 * additions on values already held: it runs on every upstream attempt.
 */
import type { FailureKind, PoolEvents } from "./pool-port";

/** One account's counts since this process started. */
export interface AccountCounters {
  requests: number;
  failures: Record<string, number>;
  failovers: number;
  cooldowns: number;
}

/** Where the counts go besides this process's table (the Prometheus metrics implement it). */
export interface PoolMetricsSink {
  upstreamAttempt(account: string): void;
  upstreamFailure(account: string, kind: string): void;
  upstreamFailover(account: string): void;
  upstreamCooled(account: string): void;
  upstreamFirstByte(account: string, seconds: number): void;
}

export class PoolCounters implements PoolEvents {
  private readonly byAccount = new Map<string, AccountCounters>();

  constructor(private readonly sink: PoolMetricsSink | null = null) {}

  private of(account: string): AccountCounters {
    let c = this.byAccount.get(account);
    if (!c) this.byAccount.set(account, (c = { requests: 0, failures: {}, failovers: 0, cooldowns: 0 }));
    return c;
  }

  attempt(account: string): void {
    this.of(account).requests++;
    this.sink?.upstreamAttempt(account);
  }

  failure(account: string, kind: FailureKind): void {
    const failures = this.of(account).failures;
    failures[kind] = (failures[kind] ?? 0) + 1;
    this.sink?.upstreamFailure(account, kind);
  }

  failover(from: string): void {
    this.of(from).failovers++;
    this.sink?.upstreamFailover(from);
  }

  cooled(account: string, _untilMs: number, _reason: string): void {
    this.of(account).cooldowns++;
    this.sink?.upstreamCooled(account);
  }

  firstByte(account: string, ms: number): void {
    this.sink?.upstreamFirstByte(account, ms / 1000);
  }

  /** A copy of one account's counts (zeros for an account with none yet). */
  counters(account: string): AccountCounters {
    const c = this.byAccount.get(account);
    return c ? { ...c, failures: { ...c.failures } } : { requests: 0, failures: {}, failovers: 0, cooldowns: 0 };
  }
}
