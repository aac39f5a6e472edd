/** Removes expired stored responses now and then every hour, logging what went; stop() ends it. */
import type { Logger } from "../../log";
import type { StoredResponseRepository } from "./stored-response-repository";

const EVERY_MS = 3_600_000;

export function startPurgingResponses(repo: StoredResponseRepository, now: () => number, log: Logger): { stop(): void } {
  const purge = () =>
    repo.purgeExpired(now()).then(
      (n) => {
        if (n > 0) log.info("expired stored responses removed", { responses: n });
      },
      (err) => log.warn("removing expired stored responses failed", { error: (err as Error).message }),
    );
  void purge();
  const timer = setInterval(purge, EVERY_MS);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
