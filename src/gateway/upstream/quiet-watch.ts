/**
 * Waits for reads with one timer for the whole sequence instead of a timer (and a racing promise) per read: a read
 * already settled is taken at once, with nothing armed; a read that has to wait arms the single timer if it is not
 * armed yet. The timer, when it fires, either says QUIET (the current wait has lasted `quietMs`) or re-arms for what
 * is left of it. The same mechanism as the event source's keep-alive, for the opening hold's quiet deadline.
 */
export class QuietWatch {
  static readonly QUIET: unique symbol = Symbol("quiet");

  private waitStart = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private wake: ((v: typeof QuietWatch.QUIET) => void) | null = null;

  constructor(private readonly quietMs: number) {}

  private readonly onTimer = (): void => {
    this.timer = null;
    if (!this.wake) return;
    const left = this.quietMs - (performance.now() - this.waitStart);
    // 1 ms of slack: timers are not more precise than that, and an early re-arm for 0 ms would only spin.
    if (left > 1) {
      this.timer = setTimeout(this.onTimer, left);
      return;
    }
    const wake = this.wake;
    this.wake = null;
    wake(QuietWatch.QUIET);
  };

  /** The read's result, or QUIET once `quietMs` pass without it. */
  race<T>(pending: Promise<T>): T | typeof QuietWatch.QUIET | Promise<T | typeof QuietWatch.QUIET> {
    if (Bun.peek.status(pending) === "fulfilled") return Bun.peek(pending) as T;
    this.waitStart = performance.now();
    this.timer ??= setTimeout(this.onTimer, this.quietMs);
    return new Promise<T | typeof QuietWatch.QUIET>((resolve, reject) => {
      this.wake = resolve;
      pending.then(
        (v) => {
          this.wake = null;
          resolve(v);
        },
        (err) => {
          this.wake = null;
          reject(err);
        },
      );
    });
  }

  /** Disarms the timer (the hold is over). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake = null;
  }
}
