/**
 * How many download links one client address may mint: a token bucket per address (an IPv6 client: its /64) of
 * `perMinute` links, refilled evenly over a minute. Memory is bounded: at most `maxEntries` addresses are
 * remembered, the least recently seen forgotten first (a forgotten address starts with a full bucket, which is
 * what a quiet one would have anyway). Per process; 0 = no limit.
 */
import { addressKey } from "../../http/throttle";

interface Bucket {
  tokens: number;
  at: number;
}

export class MintLimit {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perMinute: number,
    private readonly maxEntries = 50_000,
  ) {}

  /** Takes one link for `address`; 0 = allowed, else milliseconds until one is available (nothing taken). */
  take(address: string, now: number): number {
    if (!(this.perMinute > 0)) return 0;
    const key = addressKey(address);
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    if (now > b.at) {
      b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * rate);
      b.at = now;
    }
    // Re-inserting keeps the Map in order of last use, so eviction drops the stalest.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxEntries) this.buckets.delete(this.buckets.keys().next().value!);
    if (b.tokens < 1) return Math.ceil((1 - b.tokens) / rate);
    b.tokens -= 1;
    return 0;
  }
}
