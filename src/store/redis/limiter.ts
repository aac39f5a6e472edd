/**
 * The limiter on Redis (GANTRY_REDIS_URL): RPM/RPD buckets, concurrency slots, quota reservations and the quota
 * used live in Redis, and every admission is one Lua script (limiter-scripts.ts), so N instances enforce one set
 * of limits exactly. A request's reservation and slot are a lease that this instance renews while the request
 * runs: if the instance dies, they come back when the lease expires.
 *
 * Redis unreachable: admission fails closed with a 503 (never an unlimited pass), and a later call reconnects.
 * Settlement is sent without waiting (one connection keeps commands in order, so the next admission of the key
 * sees it); one that cannot reach Redis is logged, and the lease gives its reservation back when it expires.
 */
import { RedisClient } from "bun";
import { AppError } from "../../errors";
import type { AdmitOptions, AdmitResult, KeyLimits, LimitCode, LimiterStore, RecordedUsage, Reservation } from "../../gateway/limits/limiter-store";
import { randomToken } from "../../secrets";
import { ADMIT, FORGET, RENEW, SETTLE } from "./limiter-scripts";

export interface RedisLimiterOptions {
  /** How long a lease lives without renewal (an instance that died gives its slots back after this). */
  leaseMs?: number;
  /** State of a key nobody used for this long expires (longer than a day: RPD's bucket must survive). */
  stateTtlMs?: number;
  onError?: (err: unknown) => void;
}

interface LocalLease {
  id: string | null;
  reserve: Reservation;
  slot: boolean;
  counted: boolean;
}

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_STATE_TTL_MS = 2 * 86_400_000;

export class RedisLimiter implements LimiterStore {
  private readonly client: RedisClient;
  private readonly shas = new Map<string, string>();
  private readonly leases = new Map<string, LocalLease[]>();
  private inFlightTotal = 0;
  private readonly leaseMs: number;
  private readonly stateTtlMs: number;
  private readonly onError: (err: unknown) => void;
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private connecting: Promise<void> | null = null;
  /** Keys this instance has admitted for (forget() considers only those). */
  private readonly known = new Set<string>();

  constructor(url: string, options: RedisLimiterOptions = {}) {
    // No offline queue: while Redis is down, commands fail at once instead of waiting forever.
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: 2000, autoReconnect: true, maxRetries: 3 });
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.stateTtlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS;
    this.onError = options.onError ?? (() => {});
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref?.();
  }

  /** Connects; resolves once Redis answers (a server start fails early on a wrong URL). */
  async start(): Promise<void> {
    await this.ensureConnected();
    // Loaded up front, so a settlement's script is never still loading when the next admission is sent.
    for (const source of [ADMIT, SETTLE, RENEW, FORGET]) this.shas.set(source, (await this.client.send("SCRIPT", ["LOAD", source])) as string);
  }

  private ensureConnected(): Promise<void> {
    if (this.client.connected) return Promise.resolve();
    this.connecting ??= this.client.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Runs a script by its SHA, loading it on first use or after a Redis restart (NOSCRIPT). */
  private async script(source: string, keys: string[], args: string[]): Promise<unknown> {
    await this.ensureConnected();
    let sha = this.shas.get(source);
    if (!sha) {
      sha = (await this.client.send("SCRIPT", ["LOAD", source])) as string;
      this.shas.set(source, sha);
    }
    try {
      return await this.client.send("EVALSHA", [sha, String(keys.length), ...keys, ...args]);
    } catch (err) {
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      this.shas.delete(source);
      return this.script(source, keys, args);
    }
  }

  private keys(keyId: string): string[] {
    const tag = `{gk:${keyId}}`;
    return [`${tag}:s`, `${tag}:l`, `${tag}:r`];
  }

  async admit(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    const leaseId = randomToken(12);
    this.known.add(keyId);
    const n = (v: number | null) => (v === null ? "-1" : String(v));
    let reply: string[];
    try {
      reply = (await this.script(ADMIT, this.keys(keyId), [
        String(now), n(limits.rpm), n(limits.rpd), n(limits.concurrency), n(limits.quotaTokens), n(limits.balance),
        String(recorded.tokens), String(recorded.spent), recorded.since === null ? "n" : String(recorded.since),
        String(reserve.tokens), String(reserve.cost), opts.concurrency ? "1" : "0", opts.quota ? "1" : "0",
        leaseId, String(this.leaseMs), String(this.stateTtlMs),
      ])) as string[];
    } catch (err) {
      this.onError(err);
      // Fail closed: without the shared counters no limit can be enforced, so nothing is admitted.
      throw new AppError("service_unavailable", "Rate limiting is unavailable right now; retry shortly.", { headers: { "retry-after": "1" } });
    }
    const budget = reply[4] === "-1" ? null : { limit: Number(reply[4]), remaining: Number(reply[5]), resetMs: Number(reply[6]) };
    if (reply[0] !== "1") return { ok: false, code: reply[1] as LimitCode, retryAfterMs: Number(reply[2]), retryable: reply[3] === "1", budget };
    const slot = reply[1] === "slot";
    const leased = slot || (opts.quota && (reserve.tokens > 0 || reserve.cost > 0));
    // Only requests that will be settled are tracked (listing models is not: it holds nothing).
    if (opts.concurrency || leased) {
      const list = this.leases.get(keyId) ?? [];
      list.push({ id: leased ? leaseId : null, reserve: opts.quota ? reserve : { tokens: 0, cost: 0 }, slot, counted: opts.concurrency });
      this.leases.set(keyId, list);
      if (opts.concurrency) this.inFlightTotal += 1;
    }
    return { ok: true, slot, budget };
  }

  settle(keyId: string, reserve: Reservation, used: Reservation, slot: boolean): void {
    const list = this.leases.get(keyId) ?? [];
    // Leases of one key with the same reservation and slot are interchangeable: give back any one of them.
    let i = list.findIndex((l) => l.slot === slot && l.reserve.tokens === reserve.tokens && l.reserve.cost === reserve.cost);
    if (i < 0) i = list.findIndex((l) => l.slot === slot);
    const lease = i >= 0 ? list.splice(i, 1)[0]! : null;
    if (list.length === 0) this.leases.delete(keyId);
    if (lease?.counted) this.inFlightTotal -= 1;
    if (!lease?.id && used.tokens === 0 && used.cost === 0) return;
    this.script(SETTLE, this.keys(keyId), [lease?.id ?? "", String(used.tokens), String(used.cost)]).catch((err) => this.onError(err));
  }

  inFlight(keyId: string): number {
    return (this.leases.get(keyId) ?? []).filter((l) => l.counted).length;
  }

  totalInFlight(): number {
    return this.inFlightTotal;
  }

  forget(keepIds: Set<string>): void {
    // Only keys this instance met; their state goes once no instance holds a lease on them.
    for (const id of this.known) {
      if (keepIds.has(id) || this.leases.has(id)) continue;
      this.known.delete(id);
      this.script(FORGET, this.keys(id), []).catch((err) => this.onError(err));
    }
  }

  /** Pushes the expiry of every running lease of this instance forward (one script per key). */
  private async renew(): Promise<void> {
    for (const [keyId, list] of this.leases) {
      const ids = list.flatMap((l) => (l.id ? [l.id] : []));
      if (ids.length === 0) continue;
      try {
        await this.script(RENEW, this.keys(keyId), [String(this.leaseMs), ...ids]);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  close(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    this.client.close();
  }
}
