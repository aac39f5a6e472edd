/**
 * The upstream pool's seams: what an account is, the health state every instance shares (in the process, or in
 * Redis when scaled out), and what the pool reports (metrics, the back office, `gantry upstreams`). The choice of
 * an account and the cooldown rules are pure (upstream/rules/); the pool (upstream/pool.ts) drives them through
 * these ports. All times are epoch milliseconds.
 */

import type { FailureKind, PoolAccount, PoolHealth } from "./rules/account-types";

/** Why an account is out, as shown to operators (the rules' own word for it). */
export type { FailureKind };

/**
 * One upstream account as configured (`[[upstreams]]`, GANTRY_UPSTREAMS, or GANTRY_UPSTREAM_URL/_KEY as `default`):
 * what the rules read of it (rules/account-types.ts), and how it is reached.
 */
export interface UpstreamAccount extends PoolAccount {
  /** Base URL including its version prefix, no trailing slash. */
  readonly baseUrl: string;
  /** The credential (resolved from `key_env` at start); never logged, never shown. */
  readonly apiKey: string;
}

export type AccountState = "healthy" | "cooling" | "probing" | "disabled";

/** One account's shared health, as the pool and the reports read it (its fields: rules/account-types.ts). */
export type AccountHealth = PoolHealth;

/**
 * The state every instance shares. The in-process store keeps it in memory; the Redis one under `{gantry}:pool:*`.
 * Deadlines only ever extend: cooling an account until T when it already cools until a later T' keeps T'.
 */
export interface PoolStateStore {
  /** Every named account's health (one round trip for the whole pool). */
  read(names: readonly string[]): Promise<Map<string, AccountHealth>>;
  /** Cools an account (or one of its models) until `untilMs`, or later if already set later. */
  cool(name: string, model: string | null, untilMs: number, reason: string): Promise<void>;
  /** Takes an account out until a probe (or an operator) brings it back. */
  disable(name: string, reason: string, manual: boolean): Promise<void>;
  /** Clears cooldowns and disabling (an operator's `enable`, or a successful probe). */
  enable(name: string): Promise<void>;
  /** Claims the single probe of an account whose cooldown has passed; true for exactly one caller until `ttlMs`. */
  claimProbe(name: string, ttlMs: number): Promise<boolean>;
  /**
   * Records a 5xx/timeout failure at `nowMs` in the account's rolling window of `windowMs`; resolves to the number of
   * failures and of requests in the window, for the threshold rule to decide.
   */
  recordOutcome(name: string, failed: boolean, nowMs: number, windowMs: number): Promise<{ failures: number; requests: number }>;
  /** One more (or one fewer) stream on the account; resolves to the count after the change. */
  adjustInFlight(name: string, delta: 1 | -1): Promise<number>;
}

/** What the pool tells observers (metrics, the account counters the reports show). */
export interface PoolEvents {
  attempt(account: string): void;
  failure(account: string, kind: FailureKind): void;
  /** A call moved on from `from` to another account before its first content. */
  failover(from: string): void;
  cooled(account: string, untilMs: number, reason: string): void;
  firstByte(account: string, ms: number): void;
}

/** One account as `gantry upstreams list`, `GET /admin/api/upstreams` and the back office show it. */
export interface AccountStatus {
  name: string;
  state: AccountState;
  /** ISO time the account comes back (cooling), or null. */
  until: string | null;
  reason: string | null;
  inFlight: number;
  priority: number;
  weight: number;
  models: string[];
  counters: { requests: number; failures: Record<string, number>; failovers: number; cooldowns: number };
}

/** What the reports read and operators change. */
export interface PoolView {
  list(): Promise<AccountStatus[]>;
  /** Sends a probe (a model list request) to the account; ok or why not. */
  test(name: string): Promise<{ ok: boolean; status: number | null; message: string; ms: number }>;
  disable(name: string): Promise<void>;
  enable(name: string): Promise<void>;
}
