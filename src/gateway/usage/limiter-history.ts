/**
 * The limiter's history read from the record: the key's usage totals and its ledger rows of the last day. Used
 * only when a shared limiter meets a key it holds nothing for (first use, or Redis came back empty), never on a
 * hot path.
 */
import type { KeyRepository } from "../keys/key-repository";
import { DAY_MS, type LimiterHistory } from "../limits/limiter-store";
import type { UsageLedger } from "./ledger-repository";

export function recordedHistory(keys: Pick<KeyRepository, "usage">, ledger: Pick<UsageLedger, "flush" | "series">): LimiterHistory {
  return {
    async usage(keyId, since) {
      // This instance's rows still in the group commit count too (other instances' are a few ms from theirs).
      await ledger.flush();
      const [totals, points] = await Promise.all([keys.usage(keyId), ledger.series(since, DAY_MS, keyId)]);
      return { tokens: totals.tokens, spent: totals.spent, requests: points.reduce((n, p) => n + p.requests, 0) };
    },
  };
}
