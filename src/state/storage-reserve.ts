/**
 * Billing keeps a reserve of storage. The ledger and the site share one file system (the data dir), and the site
 * takes writes from anyone (heartbeats need no key), so when free space runs low the site's writes stop first:
 * below `reserveBytes` free, heartbeats are refused with 503 and downloads are neither counted nor pulled through
 * into the mirror, while ledger rows (and so paid requests) go on being written into what is left. Free space is
 * read every second by a timer, never on a request: a request only reads the last answer. Operator writes (admin
 * changes, uploads) are not shed: they are authenticated and deliberate.
 */
import { AppError } from "../errors";
import type { Logger } from "../log";

const CHECK_EVERY_MS = 1000;

export class StorageReserve {
  private isShort = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    /** Bytes free for this process on the data dir's file system; null when unknown (then nothing is shed). */
    private readonly freeBytes: () => number | null,
    private readonly reserveBytes: number,
    private readonly log: Pick<Logger, "warn" | "info">,
  ) {}

  /** Free space is below the reserve: site writes are shed. */
  get short(): boolean {
    return this.isShort;
  }

  /** Throws the 503 a site write gets while free space is below the reserve. */
  check(): void {
    if (!this.isShort) return;
    throw new AppError("service_unavailable", "The server is short of storage; this report cannot be taken now. Retry later.", {
      headers: { "retry-after": "60" },
    });
  }

  /** Reads the free space now, and says so in the log when the state changes. */
  refresh(): void {
    if (this.reserveBytes <= 0) return;
    let free: number | null;
    try {
      free = this.freeBytes();
    } catch {
      free = null;
    }
    const short = free !== null && free < this.reserveBytes;
    if (short === this.isShort) return;
    this.isShort = short;
    const mib = (n: number) => Math.floor(n / 1048576);
    if (short) this.log.warn("free storage is below the reserve kept for billing: heartbeats get 503 and downloads are neither counted nor mirrored until there is room", { freeMiB: mib(free!), reserveMiB: mib(this.reserveBytes) });
    else this.log.info("free storage is above the reserve again: heartbeats and download counts are taken", { reserveMiB: mib(this.reserveBytes) });
  }

  /** A server: reads now, then every second. */
  start(): void {
    if (this.timer || this.reserveBytes <= 0) return;
    this.refresh();
    this.timer = setInterval(() => this.refresh(), CHECK_EVERY_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
