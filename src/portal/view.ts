/**
 * What a key holder sees about their own key: its limits, allowed models, remaining quota, and its usage
 * today and over the last 30 days (UTC days, every day present). Never the hash, never another key. Pure.
 */
import { keyView } from "../gateway/keys/key-input";
import type { ApiKey, KeyUsageTotals } from "../gateway/keys/key-repository";
import type { UsagePoint } from "../gateway/usage/ledger-repository";

export const DAY_MS = 86_400_000;
export const PORTAL_DAYS = 30;

export interface PortalDay {
  day: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

/** The first UTC day of the window ending today. */
export function portalSince(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS - (PORTAL_DAYS - 1) * DAY_MS;
}

export function portalView(key: ApiKey, usage: KeyUsageTotals, daily: UsagePoint[], now: number) {
  const since = portalSince(now);
  const byDay = new Map(daily.map((p) => [p.bucket, p]));
  const days: PortalDay[] = [];
  for (let i = 0; i < PORTAL_DAYS; i++) {
    const bucket = since + i * DAY_MS;
    const p = byDay.get(bucket);
    days.push({
      day: new Date(bucket).toISOString().slice(0, 10),
      requests: p?.requests ?? 0,
      errors: p?.errors ?? 0,
      inputTokens: p?.inputTokens ?? 0,
      outputTokens: p?.outputTokens ?? 0,
      cost: Number((p?.cost ?? 0).toFixed(6)),
    });
  }
  const { id: _id, ...view } = keyView(key, usage, now);
  return {
    object: "portal.key",
    key: view,
    today: days[days.length - 1],
    last30Days: days.reduce(
      (acc, d) => ({
        requests: acc.requests + d.requests,
        inputTokens: acc.inputTokens + d.inputTokens,
        outputTokens: acc.outputTokens + d.outputTokens,
        cost: Number((acc.cost + d.cost).toFixed(6)),
      }),
      { requests: 0, inputTokens: 0, outputTokens: 0, cost: 0 },
    ),
    daily: days,
    generatedAt: new Date(now).toISOString(),
  };
}
