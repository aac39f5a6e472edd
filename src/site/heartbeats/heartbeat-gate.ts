/**
 * What a heartbeat must pass before it is written: the storage reserve (503 while free space is below it), then
 * the per-address limits (429 with Retry-After: too many heartbeats this minute, or a new client id past the
 * hour's allowance). The client's address is the one client-address.ts gives (trusted proxies respected).
 */
import { AppError } from "../../errors";
import { addressKey } from "../../http/throttle";
import type { StorageReserve } from "../../state/storage-reserve";
import type { HeartbeatAdmission, HeartbeatLimitStore } from "./heartbeat-limit-store";

export class HeartbeatGate {
  constructor(
    private readonly limits: HeartbeatLimitStore,
    private readonly storage: Pick<StorageReserve, "check">,
    private readonly now: () => number,
  ) {}

  /** Resolves (or returns) when the heartbeat may be written; throws the refusal otherwise. */
  admit(address: string, clientId: string): void | Promise<void> {
    this.storage.check();
    const verdict = this.limits.admit(addressKey(address), clientId, this.now());
    if (verdict instanceof Promise) return verdict.then(refuseUnless);
    refuseUnless(verdict);
  }

  close(): void {
    this.limits.close();
  }
}

function refuseUnless(verdict: HeartbeatAdmission): void {
  if (verdict.ok) return;
  const seconds = String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)));
  const message =
    verdict.reason === "rate"
      ? "Too many heartbeats from this address this minute; retry later."
      : "Too many different client ids from this address this hour; retry later.";
  throw new AppError("too_many_requests", message, { headers: { "retry-after": seconds } });
}
