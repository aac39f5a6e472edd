/**
 * What the pool's rules read of an account and of its health. Declared here, in the rules' own folder, so the pure
 * rules depend on nothing outside it; the pool's port (pool-port.ts) builds its account on this one and shares the
 * health's shape. All times are epoch milliseconds.
 */

/** Why an account is out. */
export type FailureKind = "rate_limited" | "quota" | "auth" | "server_error" | "timeout" | "connect" | "in_band_error" | "cut";

export interface PoolAccount {
  readonly name: string;
  /** Public model names served, or `*` for any; the model map's public names count too. */
  readonly models: readonly string[];
  /** Public name → this account's model id. */
  readonly modelMap: Readonly<Record<string, string>>;
  /** Lower is tried first. */
  readonly priority: number;
  /** Share within a priority tier; 0 drains the account (tried only when nothing else in its tier is usable). */
  readonly weight: number;
  /** Most streams at once on this account; null: no cap. */
  readonly maxConcurrency: number | null;
}

export interface PoolHealth {
  /** Cooling for every model until this time (null: not cooling). */
  readonly coolingUntil: number | null;
  /** Cooling for one model only (the upstream named it): model → until. */
  readonly modelCoolingUntil: Readonly<Record<string, number>>;
  /** Out until a probe succeeds (auth/quota failure), or disabled by an operator. */
  readonly disabled: { readonly reason: string; readonly manual: boolean } | null;
  /** A probe is under way (half-open): one request is let through. */
  readonly probing: boolean;
  readonly reason: string | null;
  readonly inFlight: number;
}
