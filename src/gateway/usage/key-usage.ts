/**
 * A key's usage per UTC day, for GET /admin/api/keys/:id/usage and `gantry keys usage`: one function, so the
 * CLI's --json is the admin API's answer. The window is the last N whole UTC days including today, as the
 * portal's 30-day view; `daily` holds only the days with requests (the CLI's table fills in the others).
 * `storedResponses` is what the key keeps now (responses and their size), whatever the window.
 */
import type { ApiKey, KeyRepository } from "../keys/key-repository";
import type { StoredResponseRepository } from "../responses/stored-response-repository";
import type { UsageLedger } from "./ledger-repository";
import { keyView } from "../keys/key-input";

export const DAY_MS = 86_400_000;
export const DEFAULT_USAGE_DAYS = 30;
export const MAX_USAGE_DAYS = 90;

/** `days` as asked (a query parameter or flag), within 1..90; 30 when absent or not a number. */
export function usageDays(raw: unknown): number {
  const n = Math.floor(Number(raw ?? DEFAULT_USAGE_DAYS)) || DEFAULT_USAGE_DAYS;
  return Math.min(MAX_USAGE_DAYS, Math.max(1, n));
}

/** The first millisecond of the window of `days` UTC days that ends today. */
export function usageSince(now: number, days: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
}

export async function keyUsageReport(
  deps: {
    keys: Pick<KeyRepository, "usage">;
    ledger: Pick<UsageLedger, "flush" | "series">;
    responses: Pick<StoredResponseRepository, "stats">;
    now: () => number;
  },
  key: ApiKey,
  days: number,
) {
  const now = deps.now();
  // Requests that just ended are in the report (their rows may still be waiting for the next commit).
  await deps.ledger.flush();
  return {
    key: keyView(key, await deps.keys.usage(key.id), now),
    daily: await deps.ledger.series(usageSince(now, days), DAY_MS, key.id),
    storedResponses: await deps.responses.stats(key.id),
  };
}
