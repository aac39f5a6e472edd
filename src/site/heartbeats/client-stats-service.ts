/**
 * Online statistics over the clients table, and the sampler that records the online count once a minute
 * (kept 30 days) for the back office's chart. Time comes from the injected clock.
 */
import type { Logger } from "../../log";
import type { ClientStore } from "../../store/sqlite/clients";
import {
  CLIENT_RETENTION_MS,
  SERIES_RETENTION_MS,
  aggregateClientStats,
  bucketOnlineSeries,
  minuteOf,
  onlineSince,
  parseSeriesQuery,
  type ClientStats,
  type OnlineSeries,
} from "./client-stats";
import { ONLINE_WINDOW_SECONDS } from "./heartbeat-input";

/** The timer only checks whether the minute changed, so a sample lands within seconds of each minute's start. */
const TICK_MS = 5_000;
/** Pruning is cheap but needs no minute precision. */
const PRUNE_EVERY_MS = 3_600_000;

export class ClientStatsService {
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastMinute = -1;
  private lastPrune = -Infinity;

  constructor(
    private readonly store: ClientStore,
    private readonly now: () => number,
    private readonly log: Logger,
    readonly windowSeconds = ONLINE_WINDOW_SECONDS,
  ) {}

  online(): number {
    return this.store.onlineCount(onlineSince(this.now(), this.windowSeconds));
  }

  clients(): ClientStats {
    const now = this.now();
    return aggregateClientStats(this.store.onlineGroups(onlineSince(now, this.windowSeconds)), {
      windowSeconds: this.windowSeconds,
      knownClients: this.store.knownCount(),
      now,
    });
  }

  /** `raw` = the query (`minutes`, `step`); bad values throw a 400. */
  series(raw: Record<string, unknown>): OnlineSeries {
    const q = parseSeriesQuery(raw, this.now());
    return bucketOnlineSeries(this.store.samples(q.first, q.last + q.stepMs), q, this.windowSeconds);
  }

  /** Records the online count for the current minute (the peak, if sampled twice). */
  sample(): void {
    const now = this.now();
    this.store.recordSample(minuteOf(now), this.online());
    this.lastMinute = minuteOf(now);
  }

  /** Drops samples older than 30 days and clients silent for 90 days. */
  prune(): void {
    const now = this.now();
    this.store.pruneSeries(minuteOf(now) - SERIES_RETENTION_MS);
    this.store.pruneClients(now - CLIENT_RETENTION_MS);
    this.lastPrune = now;
  }

  /** What the timer runs: a sample on each new minute, a prune every hour. Exposed for tests with a fake clock. */
  tick(): void {
    try {
      const now = this.now();
      if (minuteOf(now) !== this.lastMinute) this.sample();
      if (now - this.lastPrune >= PRUNE_EVERY_MS) this.prune();
    } catch (err) {
      // A busy or failing database costs one sample, never the process.
      this.log.warn("online sampling failed", { error: (err as Error).message });
    }
  }

  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

