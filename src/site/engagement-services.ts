/** Announcement, heartbeat and online-statistics services (issue 6). */
import type { ServiceContext } from "../service-context";

export interface EngagementServices {
  /** Starts background work (timers); one-shot CLI commands never call it. */
  start(): void;
  /** Stops timers and flushes pending writes. */
  close(): void;
}

export function createEngagementServices(_ctx: ServiceContext): EngagementServices {
  return { start() {}, close() {} };
}
