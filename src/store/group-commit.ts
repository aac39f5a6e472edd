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

  constructor(
    private readonly writeBatch: (items: T[]) => void,
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
      if (this.items.length >= this.options.maxBatch) this.flush();
      else if (!this.timer) {
        this.timer = this.options.maxDelayMs === 0 ? setImmediate(() => this.flush()) : setTimeout(() => this.flush(), this.options.maxDelayMs);
      }
    });
  }

  /** Writes everything waiting, now. Synchronous, so shutdown and reloads can rely on it. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer as ReturnType<typeof setTimeout>);
      clearImmediate(this.timer as ReturnType<typeof setImmediate>);
    }
    this.timer = null;
    if (this.items.length === 0) return;
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    try {
      this.writeBatch(items);
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }

  close(): void {
    this.flush();
    this.closed = true;
  }
}
