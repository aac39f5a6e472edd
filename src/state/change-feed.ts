/**
 * The change-notification seam. A running server keeps hot state in memory (the key cache, rendered
 * documents); another process — the CLI, or another instance — may change the records underneath. Each
 * backend says how a change travels: the embedded SQLite one polls counters that triggers move; a shared
 * backend can push instead (PostgreSQL LISTEN/NOTIFY, Redis pub/sub) behind the same three calls.
 */
export type ChangeTopic = "keys" | "releases" | "announcements";

export const CHANGE_TOPICS: readonly ChangeTopic[] = ["keys", "releases", "announcements"];

export interface ChangeFeed {
  /**
   * A number that differs from every earlier one once `topic` changed: at once after this process's own
   * `touch`, within the backend's delay for other processes' changes. Cheap: called per request.
   */
  version(topic: ChangeTopic): number;
  /** This process changed `topic` (and committed it): versions move and listeners run now. */
  touch(topic: ChangeTopic): void;
  /** `listener` runs after `topic` changed, by any process, within the backend's delay. Returns the unsubscribe. */
  subscribe(topic: ChangeTopic, listener: () => void): () => void;
  /** Stops timers or connections; versions stop moving for other processes' changes. */
  close(): void;
}
