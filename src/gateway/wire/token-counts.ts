/**
 * Token figures as the ledger records them, and the byte-based estimate used wherever the upstream reported none
 * (a reservation before a call, a call cut short, an output bound Gantry enforces): about four UTF-8 bytes a token.
 */
import type { ResponsesUsage } from "./responses-types";

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
}

export const NO_TOKENS: TokenCounts = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

export const BYTES_PER_TOKEN = 4;

/** The tokens `bytes` of text are estimated at. */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

/** Token figures (an estimate) in the Responses usage fields, for a reply that must report usage the upstream never gave. */
export function usageOfTokens(t: TokenCounts): ResponsesUsage {
  return {
    input_tokens: t.inputTokens,
    input_tokens_details: { cached_tokens: t.cachedTokens },
    output_tokens: t.outputTokens,
    output_tokens_details: { reasoning_tokens: t.reasoningTokens },
    total_tokens: t.inputTokens + t.outputTokens,
  };
}
