/**
 * One account's rolling window of outcomes, counted per second in a fixed ring with running totals: recording is a
 * few additions (no Map entry, no tuple per second, no walk over the window per call); the ring is swept for seconds
 * that left the window only when the second changes. What the in-process pool state counts every call on.
 */
export class OutcomeWindow {
  private size = 0;
  /** The second each slot counts (-1: empty), and its counts. */
  private seconds = new Float64Array(0);
  private requestsAt = new Uint32Array(0);
  private failuresAt = new Uint32Array(0);
  private requests = 0;
  private failures = 0;
  /** The latest second recorded, and the window it was swept for. */
  private last = -1;
  private windowMs = -1;

  /** Counts one outcome at `nowMs` in a window of `windowMs`; the window's totals after it. */
  record(failed: boolean, nowMs: number, windowMs: number): { failures: number; requests: number } {
    // A clock that steps back a little counts in the latest second (the window only moves forward).
    const second = Math.max(Math.floor(nowMs / 1000), this.last);
    if (windowMs !== this.windowMs) this.resize(windowMs);
    if (second !== this.last) this.sweep(second, Math.floor((nowMs - windowMs) / 1000));
    const slot = second % this.size;
    if (this.seconds[slot] !== second) {
      this.requests -= this.requestsAt[slot]!;
      this.failures -= this.failuresAt[slot]!;
      this.seconds[slot] = second;
      this.requestsAt[slot] = 0;
      this.failuresAt[slot] = 0;
    }
    this.requestsAt[slot]! += 1;
    this.requests += 1;
    if (failed) {
      this.failuresAt[slot]! += 1;
      this.failures += 1;
    }
    return { failures: this.failures, requests: this.requests };
  }

  clear(): void {
    this.seconds.fill(-1);
    this.requestsAt.fill(0);
    this.failuresAt.fill(0);
    this.requests = this.failures = 0;
    this.last = -1;
  }

  /** Drops the seconds at or before `oldest` (they left the window). */
  private sweep(second: number, oldest: number): void {
    this.last = second;
    for (let i = 0; i < this.size; i++) {
      const s = this.seconds[i]!;
      if (s !== -1 && s <= oldest) {
        this.requests -= this.requestsAt[i]!;
        this.failures -= this.failuresAt[i]!;
        this.seconds[i] = -1;
        this.requestsAt[i] = 0;
        this.failuresAt[i] = 0;
      }
    }
  }

  /** A window of another length (not in practice: the pool's is a constant) starts empty. */
  private resize(windowMs: number): void {
    this.windowMs = windowMs;
    // Every second the window can span, and the current one.
    this.size = Math.max(1, Math.ceil(windowMs / 1000) + 1);
    this.seconds = new Float64Array(this.size).fill(-1);
    this.requestsAt = new Uint32Array(this.size);
    this.failuresAt = new Uint32Array(this.size);
    this.requests = this.failures = 0;
    this.last = -1;
  }
}
