/**
 * The limiter on Redis (GANTRY_REDIS_URL): RPM/RPD buckets, concurrency slots, quota reservations and the quota
 * used live in Redis, and every admission is one Lua script (limiter-scripts.ts), so N instances enforce one set
 * of limits exactly. A request's reservation and slot are a lease that this instance renews while the request
 * runs: if the instance dies, they come back when the lease expires.
 *
 * Redis unreachable: admission fails closed with a 503 (never an unlimited pass), and a later call reconnects.
 * With a `fallback` (fail-open), an instance instead admits against its share of each limit in process: every instance
 * registers itself in Redis while it can (a sorted set of instance ids, renewed with the leases), and a limit
 * is divided by the number of instances last seen, so N instances together never exceed it. A share that comes
 * to nothing (a concurrency of 2 over 3 instances) still answers 503. Usage settled meanwhile is added to Redis
 * once it is back (counted again if Redis lost its state and re-read the database: stricter, never looser).
 * Settlement is sent without waiting (one connection keeps commands in order, so the next admission of the key
 * sees it); one that cannot reach Redis is logged, and the lease gives its reservation back when it expires.
 */
import { RedisClient } from "bun";
import { AppError } from "../../errors";
import type { AdmitOptions, AdmitResult, KeyLimits, LimitCode, LimiterStore, RecordedUsage, Reservation } from "../../gateway/limits/limiter-store";
import { randomToken } from "../../secrets";
import { ADMIT, FORGET, INSTANCES, RENEW, SETTLE } from "./limiter-scripts";
import { redisConnectError } from "./connect-errors";

export interface RedisLimiterOptions {
  /** How long a lease lives without renewal (an instance that died gives its slots back after this). */
  leaseMs?: number;
  /** State of a key nobody used for this long expires (longer than a day: RPD's bucket must survive). */
  stateTtlMs?: number;
  /**
   * Fail-open: while Redis is unreachable, admit through this in-process limiter against this instance's share
   * of each limit, instead of refusing. Absent: fail closed.
   */
  fallback?: LimiterStore;
  /** Called once when Redis stops answering (not at every failed command of the outage). */
  onError?: (err: unknown) => void;
  /** Called once when Redis answers again after an outage. */
  onRecover?: () => void;
}

interface LocalLease {
  id: string | null;
  reserve: Reservation;
  slot: boolean;
  counted: boolean;
  /** Admitted by the in-process fallback during an outage (fail-open): settled there. */
  local: boolean;
}

const INSTANCES_KEY = "gantry:instances";
const unavailable = () =>
  new AppError("service_unavailable", "Rate limiting is unavailable right now; retry shortly.", { headers: { "retry-after": "1" } });

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_STATE_TTL_MS = 2 * 86_400_000;

/** How long a connection to Redis may take to be established. */
const CONNECT_TIMEOUT_MS = 2000;

export class RedisLimiter implements LimiterStore {
  private readonly client: RedisClient;
  private readonly url: string;
  private readonly shas = new Map<string, string>();
  private readonly leases = new Map<string, LocalLease[]>();
  private inFlightTotal = 0;
  private readonly leaseMs: number;
  private readonly stateTtlMs: number;
  private readonly reportError: (err: unknown) => void;
  private readonly onRecover: () => void;
  private down = false;
  private readonly instanceId = randomToken(12);
  /** Instances registered in Redis when it last answered (this one included). */
  private instances = 1;
  private readonly fallback: LimiterStore | null;
  /** Usage settled by the fallback that Redis has not been told yet. */
  private backlog: { keyId: string; tokens: number; cost: number }[] = [];
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private connecting: Promise<void> | null = null;
  /** Keys this instance has admitted for (forget() considers only those). */
  private readonly known = new Set<string>();

  constructor(url: string, options: RedisLimiterOptions = {}) {
    // No offline queue: while Redis is down, commands fail at once instead of waiting forever.
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: CONNECT_TIMEOUT_MS, autoReconnect: true, maxRetries: 3 });
    this.url = url;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.stateTtlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS;
    this.reportError = options.onError ?? (() => {});
    this.onRecover = options.onRecover ?? (() => {});
    this.fallback = options.fallback ?? null;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref?.();
  }

  /** Connects; resolves once Redis answers (a server start fails early on a wrong URL). */
  async start(): Promise<void> {
    // The driver says "connection closed" for every failed connect, a wrong password included: say which it was.
    await this.ensureConnected().catch(async (err) => {
      throw await redisConnectError(this.url, err, CONNECT_TIMEOUT_MS);
    });
    // Loaded up front, so a settlement's script is never still loading when the next admission is sent.
    for (const source of [ADMIT, SETTLE, RENEW, FORGET, INSTANCES]) this.shas.set(source, (await this.client.send("SCRIPT", ["LOAD", source])) as string);
    await this.register();
  }

  /** Reports the first failure of an outage only: while Redis is down every command fails, and one line says it. */
  private onError(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.reportError(err);
  }

  private ok(): void {
    if (!this.down) return;
    this.down = false;
    this.onRecover();
  }

  /** Keeps this instance in the registry and reads how many instances share the limits. */
  private async register(): Promise<void> {
    this.instances = Math.max(1, Number(await this.script(INSTANCES, [INSTANCES_KEY], [this.instanceId, String(this.leaseMs), "1"])));
  }

  /** The number of instances the limits are shared by, as last seen in Redis. */
  instanceCount(): number {
    return this.instances;
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
      // Fail closed: without the shared counters no limit can be enforced, so nothing is admitted (unless the
      // operator chose fail-open: then this instance's share of each limit, counted here).
      if (this.fallback) return this.admitLocally(keyId, limits, recorded, reserve, now, opts);
      throw unavailable();
    }
    this.ok();
    const budget = reply[4] === "-1" ? null : { limit: Number(reply[4]), remaining: Number(reply[5]), resetMs: Number(reply[6]) };
    if (reply[0] !== "1") return { ok: false, code: reply[1] as LimitCode, retryAfterMs: Number(reply[2]), retryable: reply[3] === "1", budget };
    const slot = reply[1] === "slot";
    const leased = slot || (opts.quota && (reserve.tokens > 0 || reserve.cost > 0));
    // Only requests that will be settled are tracked (listing models is not: it holds nothing).
    if (opts.concurrency || leased) {
      const list = this.leases.get(keyId) ?? [];
      list.push({ id: leased ? leaseId : null, reserve: opts.quota ? reserve : { tokens: 0, cost: 0 }, slot, counted: opts.concurrency, local: false });
      this.leases.set(keyId, list);
      if (opts.concurrency) this.inFlightTotal += 1;
    }
    return { ok: true, slot, budget };
  }

  /** Fail-open admission: the in-process limiter with every limit cut to this instance's share. */
  private async admitLocally(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    const n = this.instances;
    let starved = false;
    const share = (v: number | null, base = 0) => {
      if (v === null) return null;
      const part = base + Math.floor(Math.max(0, v - base) / n);
      if (v > base && part === base) starved = true;
      return part;
    };
    const local: KeyLimits = {
      rpm: share(limits.rpm),
      rpd: share(limits.rpd),
      concurrency: opts.concurrency ? share(limits.concurrency) : limits.concurrency,
      // Of the quota left when the outage began, each instance may use its part.
      quotaTokens: opts.quota ? share(limits.quotaTokens, recorded.tokens) : limits.quotaTokens,
      balance: opts.quota ? share(limits.balance, recorded.spent) : limits.balance,
    };
    if (starved) throw unavailable();
    const result = await this.fallback!.admit(keyId, local, recorded, reserve, now, opts);
    if (result.ok && (opts.concurrency || opts.quota)) {
      const list = this.leases.get(keyId) ?? [];
      list.push({ id: null, reserve: opts.quota ? reserve : { tokens: 0, cost: 0 }, slot: result.slot, counted: opts.concurrency, local: true });
      this.leases.set(keyId, list);
      if (opts.concurrency) this.inFlightTotal += 1;
    }
    return result;
  }

  settle(keyId: string, reserve: Reservation, used: Reservation, slot: boolean): void {
    const list = this.leases.get(keyId) ?? [];
    // Leases of one key with the same reservation and slot are interchangeable: give back any one of them.
    let i = list.findIndex((l) => l.slot === slot && l.reserve.tokens === reserve.tokens && l.reserve.cost === reserve.cost);
    if (i < 0) i = list.findIndex((l) => l.slot === slot);
    if (i < 0 && list.length > 0) i = 0;
    const lease = i >= 0 ? list.splice(i, 1)[0]! : null;
    if (list.length === 0) this.leases.delete(keyId);
    if (lease?.counted) this.inFlightTotal -= 1;
    if (lease?.local) {
      this.fallback!.settle(keyId, reserve, used, slot);
      if (used.tokens !== 0 || used.cost !== 0) this.backlog.push({ keyId, tokens: used.tokens, cost: used.cost });
      return;
    }
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
    this.fallback?.forget(keepIds);
    for (const id of this.known) {
      if (keepIds.has(id) || this.leases.has(id)) continue;
      this.known.delete(id);
      this.script(FORGET, this.keys(id), []).catch((err) => this.onError(err));
    }
  }

  /** Pushes the expiry of every running lease of this instance forward (one script per key). */
  private renewing = false;

  private async renew(): Promise<void> {
    // A tick while Redis is slow to answer must not start a second round.
    if (this.renewing) return;
    this.renewing = true;
    try {
      await this.renewRound();
    } finally {
      this.renewing = false;
    }
  }

  private async renewRound(): Promise<void> {
    try {
      await this.register();
      this.ok();
    } catch (err) {
      this.onError(err);
      return;
    }
    // Usage the fail-open fallback settled during an outage.
    while (this.backlog.length > 0) {
      const { keyId, tokens, cost } = this.backlog[0]!;
      try {
        await this.script(SETTLE, this.keys(keyId), ["", String(tokens), String(cost)]);
      } catch (err) {
        this.onError(err);
        return;
      }
      this.backlog.shift();
    }
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
    // Leaves the registry, so the others' shares grow at once (best effort: the entry expires anyway).
    if (this.client.connected) {
      void this.script(INSTANCES, [INSTANCES_KEY], [this.instanceId, String(this.leaseMs), "0"])
        .catch(() => {})
        .finally(() => this.client.close());
    } else this.client.close();
  }
}
