/**
 * Online statistics over the clients table, and the sampler that records the online count once a minute
 * (kept 30 days) for the back office's chart. Time comes from the injected clock.
 */
import type { Logger } from "../../log";
import type { ClientRepository } from "./client-repository";
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
} from "./rules/client-stats";
import { ONLINE_WINDOW_SECONDS } from "./rules/heartbeat-input";

/** The timer only checks whether the minute changed, so a sample lands within seconds of each minute's start. */
const TICK_MS = 5_000;
/** Pruning is cheap but needs no minute precision. */
const PRUNE_EVERY_MS = 3_600_000;

export class ClientStatsService {
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastMinute = -1;
  private lastPrune = -Infinity;

  constructor(
    private readonly store: ClientRepository,
    private readonly now: () => number,
    private readonly log: Logger,
    readonly windowSeconds = ONLINE_WINDOW_SECONDS,
  ) {}

  online(): Promise<number> {
    return this.store.onlineCount(onlineSince(this.now(), this.windowSeconds));
  }

  async clients(): Promise<ClientStats> {
    const now = this.now();
    const since = onlineSince(now, this.windowSeconds);
    const [groups, knownClients] = await Promise.all([this.store.onlineGroups(since), this.store.knownCount()]);
    return aggregateClientStats(groups, { windowSeconds: this.windowSeconds, knownClients, now });
  }

  /** `raw` = the query (`minutes`, `step`); bad values throw a 400. */
  async series(raw: Record<string, unknown>): Promise<OnlineSeries> {
    const q = parseSeriesQuery(raw, this.now());
    return bucketOnlineSeries(await this.store.samples(q.first, q.last + q.stepMs), q, this.windowSeconds);
  }

  /** Records the online count for the current minute (the peak, if sampled twice). */
  async sample(): Promise<void> {
    const now = this.now();
    await this.store.recordSamples([{ minute: minuteOf(now), online: await this.online() }]);
    this.lastMinute = minuteOf(now);
  }

  /** Drops samples older than 30 days and clients silent for 90 days. */
  async prune(): Promise<void> {
    const now = this.now();
    await this.store.pruneSeries(minuteOf(now) - SERIES_RETENTION_MS);
    await this.store.pruneClients(now - CLIENT_RETENTION_MS);
    this.lastPrune = now;
  }

  private ticking: Promise<void> | null = null;

  /**
   * What the timer runs: a sample on each new minute, a prune every hour. Exposed for tests with a fake clock.
   * A tick called while one runs waits for that one and then runs its own, so when it resolves the clock's
   * current minute is sampled (with an asynchronous store the timer's tick may still be running).
   */
  async tick(): Promise<void> {
    while (this.ticking) await this.ticking;
    this.ticking = this.runTick().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async runTick(): Promise<void> {
    try {
      const now = this.now();
      if (minuteOf(now) !== this.lastMinute) await this.sample();
      if (now - this.lastPrune >= PRUNE_EVERY_MS) await this.prune();
    } catch (err) {
      // A busy or failing database costs one sample, never the process.
      this.log.warn("online sampling failed", { error: (err as Error).message });
    }
  }

  /** Starts the timer; resolves once the first tick (the start's sample and prune) is done. */
  start(): Promise<void> {
    if (this.timer) return Promise.resolve();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref?.();
    return this.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

