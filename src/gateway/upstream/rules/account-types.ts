/**
 * What the pool's rules read of an account and of its health: the shapes of pool-port.ts's UpstreamAccount and
 * AccountHealth, declared here so the pure rules depend on nothing outside their folder (pool.ts checks at compile
 * time that the port's types fit them).
 */

/** Why an account is out (the port's FailureKind). */
export type FailureKind = "rate_limited" | "quota" | "auth" | "server_error" | "timeout" | "connect" | "in_band_error" | "cut";

export interface PoolAccount {
  readonly name: string;
  readonly models: readonly string[];
  readonly modelMap: Readonly<Record<string, string>>;
  readonly priority: number;
  readonly weight: number;
  readonly maxConcurrency: number | null;
}

export interface PoolHealth {
  readonly coolingUntil: number | null;
  readonly modelCoolingUntil: Readonly<Record<string, number>>;
  readonly disabled: { readonly reason: string; readonly manual: boolean } | null;
  readonly probing: boolean;
  readonly reason: string | null;
  readonly inFlight: number;
}
