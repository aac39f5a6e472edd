/**
 * Online statistics (pure): the distributions of the clients online now, and the per-minute online series
 * resampled for a chart. The store hands in grouped rows and samples; nothing here reads a clock.
 */
import type { ClientGroup, OnlineSample } from "./client-types";
import { AppError } from "../../../errors";

/** How a value the client never reported is shown in distributions. */
export const UNKNOWN = "unknown";

/** Samples are kept this long (the back office's chart spans at most this). */
export const SERIES_RETENTION_MS = 30 * 86_400_000;
export const MINUTE_MS = 60_000;

/** Clients silent this long are deleted (data minimisation; also bounds the table). */
export const CLIENT_RETENTION_MS = 90 * 86_400_000;

/** One group of online clients sharing every reported field, as the store's GROUP BY returns it. */
export type Distribution = Record<string, number>;

/** The shape of OPERATOR.md (`online`, `windowSeconds`, `byVersion`, `byPlatform`, `byRuntime`) plus ours. */
export interface ClientStats {
  online: number;
  windowSeconds: number;
  byVersion: Distribution;
  byPlatform: Distribution;
  byRuntime: Distribution;
  byApp: Distribution;
  byArch: Distribution;
  byLocale: Distribution;
  /** Distinct clients seen within the retention (90 days), online or not. */
  knownClients: number;
  generatedAt: string;
}

/** Largest count first, then by name, so the JSON reads like a ranking (key order is not a contract). */
function distribution(groups: readonly ClientGroup[], field: Exclude<keyof ClientGroup, "clients">): Distribution {
  const counts = new Map<string, number>();
  for (const g of groups) {
    const key = g[field] === "" ? UNKNOWN : g[field];
    counts.set(key, (counts.get(key) ?? 0) + g.clients);
  }
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return Object.fromEntries(sorted);
}

/** Every distribution sums to `online`: each online client is in exactly one bucket of each. */
export function aggregateClientStats(
  groups: readonly ClientGroup[],
  opts: { windowSeconds: number; knownClients: number; now: number },
): ClientStats {
  return {
    online: groups.reduce((n, g) => n + g.clients, 0),
    windowSeconds: opts.windowSeconds,
    byVersion: distribution(groups, "version"),
    byPlatform: distribution(groups, "platform"),
    byRuntime: distribution(groups, "runtime"),
    byApp: distribution(groups, "app"),
    byArch: distribution(groups, "arch"),
    byLocale: distribution(groups, "locale"),
    knownClients: opts.knownClients,
    generatedAt: new Date(opts.now).toISOString(),
  };
}

/** The online window is inclusive: a client seen exactly `windowSeconds` ago still counts. */
export function onlineSince(now: number, windowSeconds: number): number {
  return now - windowSeconds * 1000;
}

export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

export interface SeriesQuery {
  /** Start of the first bucket and of the last one (epoch ms, multiples of `stepMs`). */
  first: number;
  last: number;
  stepMs: number;
}

/** A chart wants a few hundred to a few thousand points; more is refused rather than silently thinned. */
export const MAX_SERIES_POINTS = 10_000;
const DEFAULT_POINTS = 1440;
const DEFAULT_MINUTES = 1440;
const MAX_MINUTES = SERIES_RETENTION_MS / MINUTE_MS;

function bad(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

function intParam(raw: Record<string, unknown>, name: string): number | undefined {
  const v = raw[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string" || !/^\d{1,9}$/.test(v.trim())) throw bad(name, `'${name}' must be a whole number.`);
  return Number(v.trim());
}

/**
 * `minutes` (1..43200, default 1440 = one day) ending with the current minute, in buckets of `step` seconds
 * (a multiple of 60; default: the smallest that gives at most 1440 points, so 24 h -> 1 min, 30 d -> 30 min).
 * Buckets are aligned to multiples of the step since the epoch, so a chart refreshed later lines up.
 */
export function parseSeriesQuery(raw: Record<string, unknown>, now: number): SeriesQuery {
  const minutes = intParam(raw, "minutes") ?? DEFAULT_MINUTES;
  if (minutes < 1 || minutes > MAX_MINUTES) throw bad("minutes", `'minutes' must be between 1 and ${MAX_MINUTES}.`);
  const stepGiven = intParam(raw, "step");
  let stepMinutes: number;
  if (stepGiven === undefined) stepMinutes = Math.max(1, Math.ceil(minutes / DEFAULT_POINTS));
  else {
    if (stepGiven < 60 || stepGiven % 60 !== 0) throw bad("step", "'step' must be a multiple of 60 seconds.");
    stepMinutes = stepGiven / 60;
  }
  const stepMs = stepMinutes * MINUTE_MS;
  const count = Math.ceil(minutes / stepMinutes);
  if (count > MAX_SERIES_POINTS) throw bad("step", `That gives ${count} points; at most ${MAX_SERIES_POINTS} (use a larger 'step').`);
  const last = Math.floor(minuteOf(now) / stepMs) * stepMs;
  return { first: last - (count - 1) * stepMs, last, stepMs };
}

export type { ClientGroup, OnlineSample } from "./client-types";

export interface SeriesPoint {
  t: string;
  /** Peak online count among the minutes sampled in the bucket; null = no sample (the server was not running). */
  online: number | null;
}

export interface OnlineSeries {
  windowSeconds: number;
  stepSeconds: number;
  from: string;
  to: string;
  points: SeriesPoint[];
}

/** One point per bucket from `first` to `last`; the peak is shown so a short spike is not averaged away. */
export function bucketOnlineSeries(samples: readonly OnlineSample[], q: SeriesQuery, windowSeconds: number): OnlineSeries {
  const count = Math.round((q.last - q.first) / q.stepMs) + 1;
  const peaks: Array<number | null> = new Array(count).fill(null);
  for (const s of samples) {
    const i = Math.floor((s.minute - q.first) / q.stepMs);
    if (i < 0 || i >= count) continue;
    peaks[i] = Math.max(peaks[i] ?? 0, s.online);
  }
  return {
    windowSeconds,
    stepSeconds: q.stepMs / 1000,
    from: new Date(q.first).toISOString(),
    to: new Date(q.last + q.stepMs).toISOString(),
    points: peaks.map((online, i) => ({ t: new Date(q.first + i * q.stepMs).toISOString(), online })),
  };
}
