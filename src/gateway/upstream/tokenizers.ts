/**
 * The upstream family's tokenizer, loaded on first use: its tables are megabytes of JavaScript (o200k's 2.4 MB,
 * cl100k's 1.2 MB) that start-up and every request but a token count should not pay for. The compiled binary
 * carries both; each is evaluated once, the first time a count asks for it.
 */
import type { CountText, TokenizerFamily } from "../translate/input-tokens";

/** Special-token markers in a caller's text are text to the upstream, never control tokens: counted so, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const loading = new Map<TokenizerFamily, Promise<CountText>>();

function load(family: TokenizerFamily): Promise<{ countTokens: (text: string, options: typeof AS_TEXT) => number }> {
  return family === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base");
}

export function tokenizerFor(family: TokenizerFamily): Promise<CountText> {
  let counter = loading.get(family);
  if (!counter) {
    counter = load(family).then((m) => (text: string) => m.countTokens(text, AS_TEXT));
    // A load that failed is tried again by the next count rather than remembered.
    counter.catch(() => loading.delete(family));
    loading.set(family, counter);
  }
  return counter;
}
