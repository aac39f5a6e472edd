/**
 * What an upstream failure does to its account (pure): which kind of failure it is, how long a rate limit keeps the
 * account out (the latest deadline any of the upstream's reset headers names, never less than a floor), which
 * failures take it out until a probe succeeds, and when transient failures have been too many.
 * Nothing here disables an account for good: every way out has a way back.
 */
import type { FailureKind } from "./account-types";

/** A rate limit that names no reset time still keeps the account out this long. */
export const RATE_LIMIT_FLOOR_MS = 1000;
/** An account refused for its credentials or its quota is probed again after this long. */
export const PROBE_AFTER_AUTH_MS = 60_000;
/** The rolling window of transient failures (5xx, timeouts, connect errors, in-band failures before content). */
export const WINDOW_MS = 60_000;
export const WINDOW_MIN_REQUESTS = 5;
export const WINDOW_FAILURE_RATIO = 0.5;
/** An account over the window's threshold rests this long, then one probe request decides. */
export const WINDOW_COOL_MS = 30_000;
/**
 * A probe's claim lasts this long: a probe that never reaches its first content (or is refused as the caller's
 * fault) lets the next one through after it; a failed probe's own rest is no shorter.
 */
export const PROBE_TTL_MS = 30_000;

/** One failure of an attempt, as the pool observed it. */
export interface AttemptFailure {
  /** The HTTP status of the reply; null for transport failures and in-band ones. */
  status: number | null;
  /** A transport failure: no headers in time, or no connection. */
  transport?: "timeout" | "connect";
  /** An in-band failure before content: an `error` event or `response.failed`; or the stream cut before content. */
  inBand?: "error" | "cut";
  /** The error code the upstream gave (body `error.code`, or the event's). */
  code: string | null;
}

/**
 * The kind of an attempt's failure, or null when it is not the account's fault (a 400 and other 4xx: the caller's
 * request; another account would refuse it too, so nothing fails over).
 */
export function classifyFailure(f: AttemptFailure): FailureKind | null {
  if (f.transport === "timeout") return "timeout";
  if (f.transport === "connect") return "connect";
  if (f.inBand === "cut") return "cut";
  const quota = f.code === "insufficient_quota";
  if (f.inBand === "error") return quota ? "quota" : f.code === "rate_limit_exceeded" ? "rate_limited" : "in_band_error";
  const s = f.status;
  if (s === null) return null;
  if (s === 429) return quota ? "quota" : "rate_limited";
  if (s === 401 || s === 403) return "auth";
  if (s === 402) return "quota";
  if (s === 408) return "timeout";
  if (s >= 500) return "server_error";
  return null;
}

/** What the pool does with a failure of this kind. */
export type Consequence =
  /** Out (for one model, or all) until `untilMs`; back by itself then. */
  | { action: "cool"; untilMs: number }
  /** Out until a probe succeeds; the first probe after `probeAtMs`. */
  | { action: "disable"; probeAtMs: number }
  /** Counted in the rolling window; `tripped` says what to do when the window's threshold is passed. */
  | { action: "count" };

export function consequenceOf(kind: FailureKind, resetAtMs: number | null, nowMs: number): Consequence {
  switch (kind) {
    case "rate_limited":
      return { action: "cool", untilMs: Math.max(nowMs + RATE_LIMIT_FLOOR_MS, resetAtMs ?? 0) };
    case "quota":
    case "auth":
      return { action: "disable", probeAtMs: Math.max(nowMs + PROBE_AFTER_AUTH_MS, resetAtMs ?? 0) };
    default:
      return { action: "count" };
  }
}

/** Whether the rolling window's figures take the account out (then it rests WINDOW_COOL_MS and is probed). */
export function windowTripped(failures: number, requests: number): boolean {
  return requests >= WINDOW_MIN_REQUESTS && failures >= requests * WINDOW_FAILURE_RATIO;
}

/** The header names that say when a rate limit resets. */
export const RESET_HEADERS = ["retry-after", "retry-after-ms", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"] as const;

/**
 * The latest moment any reset header names (epoch ms), or null when none names one: `retry-after` in seconds or as
 * an HTTP date, `retry-after-ms`, `x-ratelimit-reset-requests` / `-tokens` as durations (`6m0s`, `1s`, `250ms`,
 * `1h2m3.5s`) or plain seconds. A value that does not read is ignored; a deadline more than a day away is taken as a
 * day (a typo upstream must not keep an account out for a year).
 */
export function resetDeadline(get: (name: string) => string | null, nowMs: number): number | null {
  let latest: number | null = null;
  const note = (ms: number | null) => {
    if (ms === null || !Number.isFinite(ms) || ms < 0) return;
    const at = nowMs + Math.min(ms, 86_400_000);
    latest = latest === null ? at : Math.max(latest, at);
  };
  const retryAfter = get("retry-after");
  if (retryAfter !== null) note(retryAfterMs(retryAfter, nowMs));
  const ms = get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) note(Number(ms));
  for (const name of ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]) {
    const v = get(name);
    if (v !== null) note(durationMs(v));
  }
  return latest;
}

function retryAfterMs(value: string, nowMs: number): number | null {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, "µs": 0.001, ns: 0.000001 };

/** A Go-style duration (`6m0s`, `1.5s`, `250ms`) or plain seconds, in ms; null when it does not read. */
export function durationMs(value: string): number | null {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(v)) return null;
  let total = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  return total;
}
