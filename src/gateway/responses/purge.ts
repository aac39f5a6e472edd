/**
 * Removes expired stored responses when started and then every hour, logging what went. Owned by the deps (started
 * by `serve`, stopped when they close), so a purge still going through its chunks when the store closes ends quietly.
 */
import type { Logger } from "../../log";
import type { StoredResponseRepository } from "./stored-response-repository";

const EVERY_MS = 3_600_000;

export interface ResponsePurge {
  /** Purges now and every hour after; resolves when this first purge is done (or started before: at once). */
  start(): Promise<void>;
  stop(): void;
}

export function responsePurge(repo: StoredResponseRepository, now: () => number, log: Logger): ResponsePurge {
  let timer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  const purge = () =>
    repo.purgeExpired(now()).then(
      (n) => {
        if (n > 0) log.info("expired stored responses removed", { responses: n });
      },
      // A purge goes in chunks: one still running when the store closes fails at its next chunk, which is no fault.
      (err) => {
        if (!stopped) log.warn("removing expired stored responses failed", { error: (err as Error).message });
      },
    );
  return {
    start() {
      if (timer || stopped) return Promise.resolve();
      timer = setInterval(purge, EVERY_MS);
      timer.unref?.();
      return purge();
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
