/**
 * The change feed on PostgreSQL: pushed, not polled. Triggers announce every committed change of keys,
 * releases and announcements on one LISTEN/NOTIFY channel (whichever process made it: an instance, another
 * one, the CLI); this feed listens on a dedicated connection and moves the topic's version when a
 * notification arrives. Bun re-subscribes after the connection drops; notifications sent meanwhile are lost,
 * so every re-subscription counts as a change of every topic (caches reload once, nothing stays stale).
 */
import type { SQL } from "bun";
import { CHANGE_TOPICS, type ChangeFeed, type ChangeTopic } from "../../state/change-feed";
import { CHANGE_CHANNEL } from "./migrations";

interface TopicState {
  version: number;
  listeners: Set<() => void>;
}

export interface PostgresChangeFeedOptions {
  onError?: (err: unknown) => void;
}

export class PostgresChangeFeed implements ChangeFeed {
  private readonly topics = new Map<ChangeTopic, TopicState>(CHANGE_TOPICS.map((t) => [t, { version: 0, listeners: new Set() }]));
  private subscription: { unlisten(): Promise<void> } | null = null;
  private subscribedOnce = false;
  private closed = false;
  private readonly onError: (err: unknown) => void;

  constructor(
    private readonly sql: SQL,
    options: PostgresChangeFeedOptions = {},
  ) {
    this.onError = options.onError ?? (() => {});
  }

  /** Subscribes; resolves once PostgreSQL acknowledged the LISTEN (changes committed after it are heard). */
  async start(): Promise<void> {
    if (this.subscription || this.closed) return;
    this.subscription = await this.sql.listen(
      CHANGE_CHANNEL,
      (payload) => {
        if (CHANGE_TOPICS.includes(payload as ChangeTopic)) this.changed(payload as ChangeTopic);
      },
      () => {
        // The first acknowledgement is the start; any later one follows a reconnect, when changes may have been missed.
        if (this.subscribedOnce) for (const topic of CHANGE_TOPICS) this.changed(topic);
        this.subscribedOnce = true;
      },
    );
  }

  version(topic: ChangeTopic): number {
    return this.topics.get(topic)!.version;
  }

  touch(topic: ChangeTopic): void {
    // The trigger's notification will come too (one more version move, one more reload: harmless); this one
    // makes the change visible to this process at once.
    this.changed(topic);
  }

  subscribe(topic: ChangeTopic, listener: () => void): () => void {
    const s = this.topics.get(topic)!;
    s.listeners.add(listener);
    return () => s.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    const sub = this.subscription;
    this.subscription = null;
    sub?.unlisten().catch((err) => this.onError(err));
  }

  private changed(topic: ChangeTopic): void {
    const s = this.topics.get(topic)!;
    s.version++;
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
