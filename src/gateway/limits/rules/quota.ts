/**
 * Quota decisions. A key is refused only when what remains, less what in-flight requests have reserved,
 * is zero or below; an admitted request reserves an estimate that is settled on the real usage later.
 */
import { BYTES_PER_TOKEN, tokensOfBytes } from "../../wire/token-counts";

export interface QuotaLimits {
  quotaTokens: number | null;
  balance: number | null;
}

export interface QuotaState {
  usedTokens: number;
  spent: number;
  reservedTokens: number;
  reservedCost: number;
}

export function quotaExhausted(limits: QuotaLimits, s: QuotaState): "tokens" | "balance" | null {
  if (limits.quotaTokens !== null && limits.quotaTokens - s.usedTokens - s.reservedTokens <= 0) return "tokens";
  if (limits.balance !== null && limits.balance - s.spent - s.reservedCost <= 0) return "balance";
  return null;
}

export interface Prices {
  input: number;
  output: number;
}

/** Cost in currency units of a usage, with prices per million tokens. */
export function costOf(prices: Prices | null, inputTokens: number, outputTokens: number): number {
  if (!prices) return 0;
  return (inputTokens * prices.input + outputTokens * prices.output) / 1_000_000;
}

/** About four UTF-8 bytes a token (wire/token-counts.ts): every estimate Gantry makes, reservations included. */
export { BYTES_PER_TOKEN, tokensOfBytes };

/**
 * A cheap estimate of a request's tokens before it runs: the body's length (about 4 bytes a token) for input,
 * and the requested output bound (or a default) for output.
 */
export function estimateTokens(bodyBytes: number, maxOutput: number | null): { input: number; output: number } {
  return { input: tokensOfBytes(bodyBytes), output: maxOutput ?? 1024 };
}
