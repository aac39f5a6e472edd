/**
 * Slows down guessing: failures are counted per client address, and after a few free attempts each further
 * failure waits twice as long as the one before (1 s, 2 s, 4 s ...). The admin credential and API keys use it
 * by delaying the failing request's own answer (`slowFailure`, at most `MAX_FAILURE_DELAY_MS`): a right
 * credential from the same address (a shared NAT, or a proxy without GANTRY_TRUSTED_PROXIES where every client
 * has one address) is never refused because someone else failed. The portal's keys are slowed the same way.
 * An hour without failures forgets an address.
 *
 * IPv6 clients are grouped by their /64 (one subscriber usually holds a whole /64, so per-address counting
 * would be free to evade).
 */
import { parseIp } from "../rules/ip-ranges";

/** The longest a failing request's answer is held back by `slowFailure`. */
export const MAX_FAILURE_DELAY_MS = 5000;

export interface ThrottleOptions {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  forgetAfterMs: number;
  /** Bounds memory under a flood from many addresses: the oldest entries go first. */
  maxEntries: number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  freeFailures: 4,
  baseDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxEntries: 10_000,
};

interface Entry {
  failures: number;
  lastFailure: number;
}

export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly options: ThrottleOptions;

  constructor(
    private readonly now: () => number,
    options: Partial<ThrottleOptions> = {},
  ) {
    this.options = { ...DEFAULT_THROTTLE, ...options };
  }

  /** Milliseconds until `address` may try again; 0 = now. */
  retryAfterMs(address: string): number {
    const entry = this.live(addressKey(address));
    if (!entry) return 0;
    return Math.max(0, entry.lastFailure + this.delayAfter(entry.failures) - this.now());
  }

  fail(address: string): void {
    const key = addressKey(address);
    const entry = this.live(key) ?? { failures: 0, lastFailure: 0 };
    entry.failures += 1;
    entry.lastFailure = this.now();
    // Re-inserting keeps the Map in order of last failure, so eviction drops the stalest.
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * Counts a failure of `address` and resolves when its answer may go out: after the address's current delay
   * (0 for the first few failures), at most `MAX_FAILURE_DELAY_MS`. Nothing is refused: only failures wait.
   */
  async slowFailure(address: string): Promise<void> {
    this.fail(address);
    const waitMs = Math.min(MAX_FAILURE_DELAY_MS, this.retryAfterMs(address));
    if (waitMs > 0) await Bun.sleep(waitMs);
  }

  succeed(address: string): void {
    this.entries.delete(addressKey(address));
  }

  /** The lockout that follows the n-th failure. */
  delayAfter(failures: number): number {
    const over = failures - this.options.freeFailures;
    if (over <= 0) return 0;
    return Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** Math.min(over - 1, 30));
  }

  private live(key: string): Entry | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (this.now() - entry.lastFailure > this.options.forgetAfterMs + this.delayAfter(entry.failures)) {
      this.entries.delete(key);
      return null;
    }
    return entry;
  }
}

/** IPv6 keys already worked out: parsing one costs microseconds, and heartbeats ask for every request. */
const v6Keys = new Map<string, string>();

/** IPv4 as is; IPv6 reduced to its /64. */
export function addressKey(address: string): string {
  // Without a colon it is IPv4 (or no address at all): kept as it is either way, so no parsing is needed.
  if (!address.includes(":")) return address;
  let key = v6Keys.get(address);
  if (key === undefined) {
    const ip = parseIp(address);
    key = !ip || ip.kind === 4 ? address : `v6:${(ip.value >> 64n).toString(16)}`;
    if (v6Keys.size >= 4096) v6Keys.clear();
    v6Keys.set(address, key);
  }
  return key;
}
