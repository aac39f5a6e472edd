/**
 * Heartbeat ingest with group commit: heartbeats that arrive together are merged per client and written in
 * one transaction, and each request is answered only after its batch committed (WAL + synchronous=FULL),
 * so an acknowledged heartbeat survives the process being killed.
 */
import { AppError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { GroupCommit } from "../store/group-commit.ts";
import type { ClientStore } from "../store/client-store.ts";
import { mergeHeartbeats, type HeartbeatRecord } from "./heartbeat-input.ts";

/**
 * A few milliseconds of waiting lets a burst share one fsync; 1024 caps the work of one transaction.
 * At one report a minute per client, 1000 clients make ~17 heartbeats a second, so batches stay small.
 */
const BATCH = { maxBatch: 1024, maxDelayMs: 0 };

export class HeartbeatService {
  private readonly writer: GroupCommit<HeartbeatRecord>;
  /** Committed batches and the heartbeats in them since start (for metrics, and to see grouping work). */
  readonly totals = { batches: 0, heartbeats: 0 };

  constructor(
    store: ClientStore,
    private readonly log: Logger,
  ) {
    this.writer = new GroupCommit<HeartbeatRecord>((items) => {
      store.writeBatch(mergeHeartbeats(items));
      this.totals.batches += 1;
      this.totals.heartbeats += items.length;
    }, BATCH);
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

  /** Writes what is waiting now (stats read after a flush see every acknowledged heartbeat). */
  flush(): void {
    this.writer.flush();
  }

  close(): void {
    this.writer.close();
  }
}
