/**
 * Whether the ledger can be written. When a ledger write fails (a full disk, an I/O error, the database gone), the
 * answers of the calls in flight are withheld (what CallSettlement.settle answers), and new gateway requests are refused with
 * a 503 and Retry-After from then on, instead of running upstream work whose answer would be withheld too. A probe
 * write is tried every second; the first that succeeds lets requests in again, with no operator action.
 */
import { AppError } from "../../errors";
import type { Logger } from "../../log";

const PROBE_EVERY_MS = 1000;

export class LedgerHealth {
  private down = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private probing = false;

  constructor(
    /** A write that needs what a ledger row needs (space, a working database), leaving nothing behind. */
    private readonly probe: () => Promise<void>,
    private readonly log: Pick<Logger, "error" | "info">,
  ) {}

  get writable(): boolean {
    return !this.down;
  }

  /** A ledger write failed. */
  failed(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.log.error("the ledger cannot be written: gateway requests get 503 until it can", { error: String(err) });
    this.timer = setInterval(() => void this.tryProbe(), PROBE_EVERY_MS);
    // A server that is otherwise idle may still exit.
    this.timer.unref?.();
  }

  /** Throws the 503 a new gateway request gets while the ledger cannot be written. */
  check(): void {
    if (!this.down) return;
    throw new AppError("service_unavailable", "Usage cannot be recorded right now (the server's storage is failing), so no request is taken; retry shortly.", {
      headers: { "retry-after": "5" },
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Tries a probe write now and answers whether it went through, for readiness: a server whose writes all fail
   * is not ready, whether or not a gateway request has failed yet. A failure counts like a failed ledger write, a
   * success like a probe that recovers. Overlapping calls share one probe.
   */
  verify(): Promise<boolean> {
    this.verifying ??= this.probe().then(
      () => {
        if (this.down) this.recovered();
        return true;
      },
      (err: unknown) => {
        this.failed(err);
        return false;
      },
    ).finally(() => {
      this.verifying = null;
    });
    return this.verifying;
  }

  private verifying: Promise<boolean> | null = null;

  private recovered(): void {
    this.down = false;
    this.stop();
    this.log.info("the ledger can be written again: gateway requests are taken");
  }

  private async tryProbe(): Promise<void> {
    if (this.probing || !this.down) return;
    this.probing = true;
    try {
      await this.probe();
      if (this.down) this.recovered();
    } catch {
      // Still failing: the next tick tries again.
    } finally {
      this.probing = false;
    }
  }
}
