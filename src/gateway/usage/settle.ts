/**
 * Settlement: when a gateway request ends (completed, failed or abandoned), its real usage replaces the
 * reservation made at admission, the key's running totals advance, and a ledger row is written.
 */
import type { UsageLedger } from "./ledger-repository";
import type { Lease } from "../limits/admission";
import { compileModelList } from "../limits/rules/model-match";
import { costOf, type Prices } from "../limits/rules/quota";
import type { ResponsesUsage } from "../wire/responses-types";

import { NO_TOKENS, type TokenCounts } from "../wire/token-counts";
export { NO_TOKENS, type TokenCounts };

export function tokenCounts(u: ResponsesUsage | null | undefined): TokenCounts {
  if (!u) return NO_TOKENS;
  return {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? 0,
    cachedTokens: u.input_tokens_details?.cached_tokens ?? 0,
  };
}

/** More than any one request can use: figures above it are an upstream's error, not usage. */
export const MAX_REPORTED_TOKENS = 100_000_000;

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_REPORTED_TOKENS;
}

/**
 * The upstream's usage figures, checked: each a whole number from 0 to MAX_REPORTED_TOKENS (absent ones count 0),
 * cached within input and reasoning within output. null when they are not: a negative count would credit the key,
 * an absurd one drain it, so neither is taken (the caller then settles on an estimate).
 */
export function checkedTokenCounts(u: ResponsesUsage): TokenCounts | null {
  const counts = tokenCounts(u);
  if (!isCount(counts.inputTokens) || !isCount(counts.outputTokens) || !isCount(counts.reasoningTokens) || !isCount(counts.cachedTokens)) return null;
  if (counts.cachedTokens > counts.inputTokens || counts.reasoningTokens > counts.outputTokens) return null;
  return counts;
}

/** Prices by exact model id first, then by the first glob that matches, as configured. */
export function createPriceLookup(prices: Record<string, Prices>): (model: string) => Prices | null {
  const entries = Object.entries(prices).map(([pattern, p]) => ({ matches: compileModelList([pattern]), p }));
  const cache = new Map<string, Prices | null>();
  return (model) => {
    let hit = cache.get(model);
    if (hit === undefined) {
      hit = prices[model] ?? entries.find((e) => e.matches(model))?.p ?? null;
      if (cache.size < 1000) cache.set(model, hit);
    }
    return hit;
  };
}

export interface RequestOutcome {
  requestId: string;
  endpoint: string;
  model: string;
  status: number;
  errorCode: string | null;
  tokens: TokenCounts;
  startedAt: number;
  endedAt: number;
  upstreamTtfbMs: number | null;
  /** The upstream account that served the request; null (or absent) when none did. */
  account?: string | null;
  /** `tokens` are Gantry's estimate (the request was cut before the upstream reported usage). */
  estimated?: boolean;
}

export interface Settler {
  /** Settles and releases the lease; idempotent per lease. Returns the ledger write's promise. */
  settle(lease: Lease | null, outcome: RequestOutcome): Promise<void>;
}

export function createSettler(deps: {
  ledger: Pick<UsageLedger, "record">;
  priceOf: (model: string) => Prices | null;
  onSettled?: (outcome: RequestOutcome, cost: number) => void;
}): Settler {
  const settled = new WeakSet<object>();
  return {
    settle(lease, o) {
      if (lease) {
        if (settled.has(lease)) return Promise.resolve();
        settled.add(lease);
      }
      const cost = costOf(deps.priceOf(o.model), o.tokens.inputTokens, o.tokens.outputTokens);
      // The limiter owns the quota used: the key cache's totals are only what the database recorded.
      lease?.settle({ tokens: o.tokens.inputTokens + o.tokens.outputTokens, cost });
      deps.onSettled?.(o, cost);
      return deps.ledger.record({
        ts: o.endedAt,
        requestId: o.requestId,
        keyId: lease?.key.key.id ?? null,
        model: o.model,
        endpoint: o.endpoint,
        status: o.status,
        errorCode: o.errorCode,
        ...o.tokens,
        cost,
        durationMs: Math.max(0, Math.round(o.endedAt - o.startedAt)),
        upstreamTtfbMs: o.upstreamTtfbMs,
        estimated: o.estimated === true,
        account: o.account ?? null,
      });
    },
  };
}
