/**
 * A stamp that moves whenever releases or assets change, so the server can keep rendered documents without a
 * query per request: at once for writes made through this process's ReleaseStore (it calls `touch()`), and
 * within `pollMs` for writes by another process (the CLI), seen through the counter migration 004 keeps.
 */
import type { Database } from "bun:sqlite";

export const RELEASES_POLL_MS = 100;

export class ReleasesGeneration {
  private value = 0;
  private seen = -1;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private readonly read: () => number;

  constructor(
    db: Database,
    private readonly pollMs = RELEASES_POLL_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {
    const query = db.query("SELECT value FROM meta WHERE key = 'releases_generation'");
    this.read = () => Number((query.get() as { value: string } | null)?.value ?? 0);
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
