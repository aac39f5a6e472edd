/**
 * Whether the sole account of a pool of one is disabled by an operator. A pool of one sends every call to its
 * account whatever its automatic state (there is nowhere else to go, and the upstream judges its own limits), but an
 * operator who disables it (a leaked key, an account to stop paying for) wants calls refused. That must not cost
 * the pool of one a state read per call: the answer is kept, read again at most once a second (so an operator's
 * change made on another instance sharing Redis arrives within a second), and forgotten at once when an operator
 * changes it on this instance (`invalidate`).
 */
import type { PoolStateStore } from "./pool-port";

/** How old the kept answer may be before a call reads the state again. */
export const SOLE_STATE_MAX_AGE_MS = 1000;

export class SoleAccountGate {
  private disabled = false;
  private checkedAt = -Infinity;
  private pending: Promise<boolean> | null = null;
  /** Bumped by `invalidate`, so a read started before an operator's change does not pass for a fresh one. */
  private generation = 0;

  constructor(
    private readonly state: Pick<PoolStateStore, "read">,
    private readonly name: string,
    /** Monotonic (the pool's clock may be moved by tests). */
    private readonly clock: () => number = performance.now.bind(performance),
  ) {}

  /** True when an operator disabled the account; a promise only when the kept answer is too old (one call a second). */
  disabledByOperator(): boolean | Promise<boolean> {
    if (this.clock() - this.checkedAt < SOLE_STATE_MAX_AGE_MS) return this.disabled;
    return (this.pending ??= this.refresh());
  }

  /** An operator changed the account here: the next call reads the state again. */
  invalidate(): void {
    this.generation++;
    this.checkedAt = -Infinity;
    this.pending = null;
  }

  private async refresh(): Promise<boolean> {
    const generation = this.generation;
    const started = this.clock();
    try {
      const health = (await this.state.read([this.name])).get(this.name);
      if (generation === this.generation) {
        this.disabled = health?.disabled?.manual === true;
        this.checkedAt = started;
      }
    } catch {
      // The state could not be read: the last answer stands, and the next call tries again.
    } finally {
      if (generation === this.generation) this.pending = null;
    }
    return this.disabled;
  }
}
