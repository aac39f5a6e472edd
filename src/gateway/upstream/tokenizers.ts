/**
 * The upstream family's tokenizer, loaded on first use, and a count that shares the event loop.
 *
 * A tokenizer's tables are megabytes of JavaScript (o200k's 2.4 MB, cl100k's 1.2 MB) that start-up and every
 * request but a token count should not pay for: each is imported the first time a count asks for it, once.
 *
 * Counting runs on the event loop every stream shares, and its cost depends on the text: ordinary prose and code
 * take about 5 ms per 76 KB (a Claude Code request), but a long run without spaces (random characters, an
 * inlined blob) costs the byte-pair merge far more, seconds per megabyte. So a count works in slices of at most
 * SLICE_CHARS, gives the loop back every YIELD_MS, and counts exactly for at most BUDGET_MS: what is left after
 * that (megabytes of ordinary text, or a hostile body) is extrapolated at the rate counted so far.
 */
import { textSlices, type CountText, type InputTokenPlan, type TokenizerFamily } from "../translate/input-tokens";
import { BYTES_PER_TOKEN } from "../wire/token-counts";

/** Special-token markers in a caller's text are text to the upstream, never control tokens: counted so, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Pieces the byte-pair merge remembers (its default, 100,000 pieces of any length, could hold gigabytes). */
const MERGE_CACHE_PIECES = 4096;
export const SLICE_CHARS = 4096;
export const YIELD_MS = 8;
export const BUDGET_MS = 500;

interface Encoding {
  countTokens(text: string, options: typeof AS_TEXT): number;
  setMergeCacheSize(size: number): void;
}

const loading = new Map<TokenizerFamily, Promise<CountText>>();

function load(family: TokenizerFamily): Promise<Encoding> {
  return family === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base");
}

export function tokenizerFor(family: TokenizerFamily): Promise<CountText> {
  let counter = loading.get(family);
  if (!counter) {
    counter = load(family).then((m) => {
      m.setMergeCacheSize(MERGE_CACHE_PIECES);
      return (text: string) => m.countTokens(text, AS_TEXT);
    });
    // A load that failed is tried again by the next count rather than remembered.
    counter.catch(() => loading.delete(family));
    loading.set(family, counter);
  }
  return counter;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A plan's tokens: its texts counted slice by slice within the budget, the rest extrapolated, plus its framing. */
export async function countPlanned(plan: InputTokenPlan, family: TokenizerFamily, now: () => number = performance.now.bind(performance)): Promise<number> {
  const countText = await tokenizerFor(family);
  const started = now();
  let sliceStarted = started;
  let tokens = 0;
  let counted = 0;
  let left = plan.texts.reduce((n, t) => n + t.length, 0);
  for (const text of plan.texts) {
    for (const slice of textSlices(text, SLICE_CHARS)) {
      const t = now();
      if (t - started >= BUDGET_MS) return plan.fixed + tokens + Math.ceil(left * (counted > 0 ? tokens / counted : 1 / BYTES_PER_TOKEN));
      if (t - sliceStarted >= YIELD_MS) {
        await yieldToLoop();
        sliceStarted = now();
      }
      tokens += countText(slice);
      counted += slice.length;
      left -= slice.length;
    }
  }
  return plan.fixed + tokens;
}
