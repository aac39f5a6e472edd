/**
 * A token bucket with capacity = the limit, refilled evenly over the window (RPM: a minute, RPD: a day).
 * Pure state + time passed in, so tests drive it with an injected clock.
 */
export interface TokenBucket {
  capacity: number;
  windowMs: number;
  tokens: number;
  updatedAt: number;
}

export function createBucket(capacity: number, windowMs: number, now: number): TokenBucket {
  return { capacity, windowMs, tokens: capacity, updatedAt: now };
}

/** Brings the bucket up to `now`. Idempotent; never moves time backwards. */
export function refill(b: TokenBucket, now: number): void {
  if (now <= b.updatedAt) return;
  const rate = b.capacity / b.windowMs;
  b.tokens = Math.min(b.capacity, b.tokens + (now - b.updatedAt) * rate);
  b.updatedAt = now;
}

export function canTake(b: TokenBucket, now: number): boolean {
  refill(b, now);
  return b.tokens >= 1;
}

export function take(b: TokenBucket, now: number): void {
  refill(b, now);
  b.tokens -= 1;
}

/**
 * A bucket of no capacity (a limit of 0, refused at input but possibly stored by an older version) never
 * refills; its waits are reported as one window, so no caller ever divides by zero or prints NaN/Infinity.
 */
function empty(b: TokenBucket): boolean {
  return !(b.capacity > 0);
}

/** Milliseconds until one whole token is available (0 if one is). */
export function msUntilToken(b: TokenBucket, now: number): number {
  refill(b, now);
  if (b.tokens >= 1) return 0;
  if (empty(b)) return b.windowMs;
  return Math.ceil(((1 - b.tokens) * b.windowMs) / b.capacity);
}

/** Milliseconds until the bucket is full again (what OpenAI's x-ratelimit-reset-requests reports). */
export function msUntilFull(b: TokenBucket, now: number): number {
  refill(b, now);
  if (empty(b)) return b.windowMs;
  return Math.ceil(((b.capacity - b.tokens) * b.windowMs) / b.capacity);
}

/** A new limit keeps what was used: a bucket never holds more than its new capacity. */
export function resize(b: TokenBucket, capacity: number, now: number): void {
  refill(b, now);
  const used = b.capacity - b.tokens;
  b.capacity = capacity;
  // May go below zero when the limit is lowered under what was already used: the caller then waits.
  b.tokens = capacity - used;
}
