/** Release, asset, mirror, download-token and sync services (issue 5). */
import type { ServiceContext } from "../service-context";

export interface ReleaseServices {
  /** Starts background work (timers); one-shot CLI commands never call it. */
  start(): void;
  /** Stops timers and flushes pending writes. */
  close(): void;
}

export function createReleaseServices(_ctx: ServiceContext): ReleaseServices {
  return { start() {}, close() {} };
}
