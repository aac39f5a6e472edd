/**
 * Heartbeat ingest with group commit: heartbeats that arrive together are merged per client and appended to
 * the journal in one transaction, and each request is answered only after its batch committed (WAL +
 * synchronous=FULL), so an acknowledged heartbeat survives the process being killed. The journal is folded
 * into the clients table every FOLD_EVERY_MS, in large batches that share pages (and before any read of it).
 */
import { AppError } from "../../errors";
import type { Logger } from "../../log";
import { GroupCommit } from "../../state/group-commit";
import type { ClientRepository, FoldResult } from "./client-repository";
import { mergeHeartbeats, type HeartbeatRecord } from "./rules/heartbeat-input";

/**
 * A few milliseconds of waiting lets a burst share one fsync; 1024 caps the work of one transaction.
 * At one report a minute per client, 1000 clients make ~17 heartbeats a second, so batches stay small.
 */
const BATCH = { maxBatch: 1024, maxDelayMs: 0 };
const FOLD_EVERY_MS = 1000;

export class HeartbeatService {
  private readonly writer: GroupCommit<HeartbeatRecord>;
  /** Committed batches and the heartbeats in them since start (for metrics, and to see grouping work). */
  get totals(): { batches: number; heartbeats: number } {
    return { batches: this.writer.written.batches, heartbeats: this.writer.written.items };
  }
  private foldTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly store: ClientRepository,
    private readonly log: Logger,
  ) {
    // The repository's promise is handed straight to the group commit: SQLite's is already settled, and the
    // group commit answers such a batch at once.
    this.writer = new GroupCommit<HeartbeatRecord>((items) => store.append(mergeHeartbeats(items)), BATCH);
  }

  /** Resolves once the heartbeat is durable; a failed or refused write is a 503 the client may retry. */
  async record(heartbeat: HeartbeatRecord): Promise<void> {
    try {
      await this.writer.add(heartbeat);
    } catch (err) {
      this.log.error("heartbeat write failed", { error: (err as Error).message });
      throw new AppError("service_unavailable", "The heartbeat could not be stored; retry later.", { headers: { "retry-after": "5" } });
    }
  }

  get pending(): number {
    return this.writer.pending;
  }

  /** Folds the journal now and then every FOLD_EVERY_MS (a server; one-shot commands fold when they read). */
  start(): void {
    if (this.foldTimer) return;
    this.foldTimer = setInterval(() => void this.foldInBackground(), FOLD_EVERY_MS);
    this.foldTimer.unref?.();
  }

  private folding = false;

  /** In the background: one chunk per turn of the event loop, so requests are served in between. */
  private async foldInBackground(): Promise<void> {
    if (this.folding) return;
    this.folding = true;
    try {
      while ((await this.fold(1)).more) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      this.folding = false;
    }
  }

  private async fold(maxChunks = Number.POSITIVE_INFINITY): Promise<FoldResult> {
    try {
      return await this.store.fold(maxChunks);
    } catch (err) {
      // Nothing is lost: the rows stay in the journal for the next fold.
      this.log.warn("heartbeat fold failed", { error: (err as Error).message });
      return { moved: 0, more: false };
    }
  }

  async close(): Promise<void> {
    if (this.foldTimer) clearInterval(this.foldTimer);
    this.foldTimer = null;
    await this.writer.close();
    await this.fold();
  }
}
