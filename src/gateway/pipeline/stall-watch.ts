/**
 * Callers that stop reading. A streamed reply's body is pulled by the server only as the caller's socket drains:
 * a caller that never reads leaves the body suspended at a `yield` (what it holds is its socket buffers, a few MiB),
 * while its upstream stream and its lease stay held. Enough of them (one key, no concurrency cap) would hold every
 * upstream connection. So every streamed body is watched: one that has waited at the same `yield` longer than the
 * bound is given up (its upstream aborted, the call settled as `caller_stalled`, its lease freed).
 *
 * The hot path only flips two fields per chunk (no clock, no timer, no wrapping generator, each of which measurably
 * cost CPU on every stream); one sweep timer for all streams notices a body still waiting at the chunk it saw
 * waiting on its previous visit.
 */

export interface Watched {
  /** True while the body waits at a `yield` for the server to take the chunk. */
  waiting: boolean;
  /** Counts chunks yielded: a different count means the caller took something since the last sweep. */
  chunks: number;
  /** Sweep bookkeeping: the count seen waiting, and since when (ms, performance.now()). */
  seenChunks: number;
  seenSince: number;
  onStall: () => void;
}

export class StallWatch {
  private readonly watched = new Set<Watched>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly everyMs: number;

  constructor(private readonly boundMs: number) {
    this.everyMs = Math.max(50, Math.min(1000, boundMs / 4));
  }

  /**
   * Watches one streamed body, which marks each `yield`: `waiting = true; chunks++` before, `waiting = false` after.
   * `onStall` runs once if it waits at one chunk longer than the bound.
   */
  track(onStall: () => void): Watched {
    const entry: Watched = { waiting: false, chunks: 0, seenChunks: -1, seenSince: 0, onStall };
    this.watched.add(entry);
    if (!this.timer) {
      // One timer for the process's life (unref'd): starting and stopping it as streams come and go costs more.
      this.timer = setInterval(() => this.sweep(), this.everyMs);
      this.timer.unref?.();
    }
    return entry;
  }

  untrack(entry: Watched): void {
    this.watched.delete(entry);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private sweep(): void {
    const now = performance.now();
    for (const entry of this.watched) {
      if (!entry.waiting || entry.chunks !== entry.seenChunks) {
        // Running, or waiting at a chunk not seen before: its wait starts now, at the latest.
        entry.seenChunks = entry.waiting ? entry.chunks : -1;
        entry.seenSince = now;
        continue;
      }
      if (now - entry.seenSince < this.boundMs) continue;
      this.watched.delete(entry);
      try {
        entry.onStall();
      } catch {
        // A failing handler must not stop the sweep of the others.
      }
    }
  }
}
