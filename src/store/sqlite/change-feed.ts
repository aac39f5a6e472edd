/**
 * The SQLite change feed: triggers (migrations 001, 004, 006) move a counter in `meta` for every write to a
 * topic's tables, whichever process makes it. Versions read the counter lazily, at most every `versionPollMs`
 * (a hot path asks per request and must not query each time); listeners are served by one timer that reads
 * the counters of the subscribed topics every `watchMs`.
 */
import type { Database } from "bun:sqlite";
import type { ChangeFeed, ChangeTopic } from "../../state/change-feed";

/** How stale another process's change may look to `version`: a tenth of a second. */
export const VERSION_POLL_MS = 100;
/** How soon listeners hear of another process's change: well inside the one second the contract allows for keys. */
export const WATCH_MS = 250;

const COUNTERS: Record<ChangeTopic, string> = {
  keys: "keys_generation",
  releases: "releases_generation",
  announcements: "announcements_generation",
};

interface TopicState {
  /** What this process hands out: moves when the counter moved or on touch. */
  version: number;
  /** The counter as last read; -1 before the first read. */
  seen: number;
  checkedAt: number;
  listeners: Set<() => void>;
}

export interface SqliteChangeFeedOptions {
  versionPollMs?: number;
  watchMs?: number;
  clock?: () => number;
  /** Where a listener's failure or a failed read is reported (they never stop the others). */
  onError?: (err: unknown) => void;
}

export class SqliteChangeFeed implements ChangeFeed {
  private readonly read: (topic: ChangeTopic) => number;
  private readonly topics = new Map<ChangeTopic, TopicState>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly versionPollMs: number;
  private readonly watchMs: number;
  private readonly clock: () => number;
  private readonly onError: (err: unknown) => void;

  constructor(db: Database, options: SqliteChangeFeedOptions = {}) {
    const query = db.query("SELECT value FROM meta WHERE key = ?");
    this.read = (topic) => Number((query.get(COUNTERS[topic]) as { value: string } | null)?.value ?? 0);
    this.versionPollMs = options.versionPollMs ?? VERSION_POLL_MS;
    this.watchMs = options.watchMs ?? WATCH_MS;
    this.clock = options.clock ?? (() => performance.now());
    this.onError = options.onError ?? (() => {});
  }

  version(topic: ChangeTopic): number {
    const s = this.state(topic);
    const now = this.clock();
    if (now - s.checkedAt >= this.versionPollMs) this.check(topic, s, now);
    return s.version;
  }

  touch(topic: ChangeTopic): void {
    const s = this.state(topic);
    s.version++;
    // The next version() re-reads, so the counter our own write moved is not taken for a second change.
    s.checkedAt = Number.NEGATIVE_INFINITY;
    this.notify(s);
  }

  subscribe(topic: ChangeTopic, listener: () => void): () => void {
    const s = this.state(topic);
    if (s.seen < 0) this.check(topic, s, this.clock());
    s.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => this.watch(), this.watchMs);
      (this.timer as { unref?: () => void }).unref?.();
    }
    return () => {
      s.listeners.delete(listener);
    };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private state(topic: ChangeTopic): TopicState {
    let s = this.topics.get(topic);
    if (!s) {
      s = { version: 0, seen: -1, checkedAt: Number.NEGATIVE_INFINITY, listeners: new Set() };
      this.topics.set(topic, s);
    }
    return s;
  }

  /** Reads the counter; returns whether it moved (the first read only sets the baseline). */
  private check(topic: ChangeTopic, s: TopicState, now: number): boolean {
    s.checkedAt = now;
    const counter = this.read(topic);
    if (counter === s.seen) return false;
    const first = s.seen < 0;
    s.seen = counter;
    s.version++;
    return !first;
  }

  private watch(): void {
    const now = this.clock();
    for (const [topic, s] of this.topics) {
      if (s.listeners.size === 0) continue;
      try {
        if (this.check(topic, s, now)) this.notify(s);
      } catch (err) {
        // A busy or closed database: the next tick tries again.
        this.onError(err);
      }
    }
  }

  private notify(s: TopicState): void {
    for (const listener of [...s.listeners]) {
      try {
        listener();
      } catch (err) {
        // One listener's failure must not keep the others from hearing of the change.
        this.onError(err);
      }
    }
  }
}
