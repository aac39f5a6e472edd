/**
 * Group commit: writes that arrive together are committed in one transaction, and each caller's promise
 * resolves only after its batch committed. One fsync serves a whole batch, and nothing is acknowledged
 * before it is durable.
 */
export interface GroupCommitOptions {
  /** Flush at once when this many items are waiting. */
  maxBatch: number;
  /**
   * Longest an item waits for company before its batch is written. 0 = the next turn of the event loop: under
   * load, batches still form, because everything that arrived while the previous commit blocked the loop is
   * written together; with no load nothing waits for company that will not come.
   */
  maxDelayMs: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T> {
  private items: T[] = [];
  private waiters: Waiter[] = [];
  private timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | null = null;
  private closed = false;
  /** The batch being written by an asynchronous writeBatch; at most one at a time, in order. */
  private inFlight: Promise<void> | null = null;
  /** What has been committed so far (for metrics and tests). */
  readonly written = { batches: 0, items: 0 };

  constructor(
    /** Writes one batch atomically. Synchronous (SQLite) or asynchronous (a database over the network). */
    private readonly writeBatch: (items: T[]) => void | Promise<void>,
    private readonly options: GroupCommitOptions = { maxBatch: 512, maxDelayMs: 0 },
  ) {}

  get pending(): number {
    return this.items.length;
  }

  add(item: T): Promise<void> {
    if (this.closed) return Promise.reject(new Error("group commit is closed"));
    return new Promise<void>((resolve, reject) => {
      this.items.push(item);
      this.waiters.push({ resolve, reject });
      if (this.items.length >= this.options.maxBatch) void this.flush();
      else if (!this.timer) this.schedule();
    });
  }

  /**
   * Writes everything waiting, now, and resolves once it is written (failures reach the items' own promises,
   * never this one). With a synchronous writeBatch the write happens before flush returns. While an
   * asynchronous batch is being written, items wait for it and form the next batch.
   */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer as ReturnType<typeof setTimeout>);
      clearImmediate(this.timer as ReturnType<typeof setImmediate>);
    }
    this.timer = null;
    if (this.inFlight) return this.inFlight.then(() => this.flush());
    if (this.items.length === 0) return Promise.resolve();
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    let written: void | Promise<void>;
    try {
      written = this.writeBatch(items);
    } catch (err) {
      for (const w of waiters) w.reject(err);
      return Promise.resolve();
    }
    if (!(written instanceof Promise)) {
      this.count(items.length);
      for (const w of waiters) w.resolve();
      return Promise.resolve();
    }
    // An asynchronous writer over a synchronous store (SQLite behind an async port) returns a promise that is
    // already settled: answer the waiters now instead of holding the next batch behind a chain of reactions.
    const status = Bun.peek.status(written);
    if (status !== "pending") {
      if (status === "fulfilled") {
        this.count(items.length);
        for (const w of waiters) w.resolve();
      } else {
        const err = Bun.peek(written);
        written.catch(() => {});
        for (const w of waiters) w.reject(err);
      }
      return Promise.resolve();
    }
    this.inFlight = written
      .then(
        () => {
          this.count(items.length);
          for (const w of waiters) w.resolve();
        },
        (err) => {
          for (const w of waiters) w.reject(err);
        },
      )
      .finally(() => {
        this.inFlight = null;
        // What arrived meanwhile goes next, without waiting for another add.
        if (this.items.length > 0 && !this.timer) this.schedule();
      });
    return this.inFlight;
  }

  /** Writes what is waiting, then refuses new items. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private count(items: number): void {
    this.written.batches += 1;
    this.written.items += items;
  }

  private schedule(): void {
    this.timer = this.options.maxDelayMs === 0 ? setImmediate(() => void this.flush()) : setTimeout(() => void this.flush(), this.options.maxDelayMs);
  }
}
