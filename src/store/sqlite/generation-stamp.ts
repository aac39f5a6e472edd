/**
 * A stamp that moves whenever a group of tables changes, so the server can keep rendered documents without a
 * query per request: at once for writes made through this process's store (it calls `touch()`), and within
 * `pollMs` for writes by another process (the CLI), seen through a counter in `meta` that triggers keep
 * (migrations 004 for releases and assets, 006 for announcements).
 */
import type { Database } from "bun:sqlite";

/** How stale another process's change may be seen: a tenth of a second. */
export const GENERATION_POLL_MS = 100;

export class GenerationStamp {
  private value = 0;
  private seen = -1;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private readonly read: () => number;

  constructor(
    db: Database,
    metaKey: string,
    private readonly pollMs = GENERATION_POLL_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {
    const query = db.query("SELECT value FROM meta WHERE key = ?");
    this.read = () => Number((query.get(metaKey) as { value: string } | null)?.value ?? 0);
  }

  /** Equal stamps mean nothing changed in between (as far as this process can know yet). */
  stamp(): number {
    const now = this.clock();
    if (now - this.checkedAt >= this.pollMs) {
      this.checkedAt = now;
      const gen = this.read();
      if (gen !== this.seen) {
        this.seen = gen;
        this.value++;
      }
    }
    return this.value;
  }

  /** A write in this process: the next stamp differs, and re-reads the counter. */
  touch(): void {
    this.value++;
    this.checkedAt = Number.NEGATIVE_INFINITY;
  }
}
