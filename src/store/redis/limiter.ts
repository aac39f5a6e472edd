/**
 * The limiter on Redis (GANTRY_REDIS_URL): RPM/RPD buckets, concurrency slots, quota reservations and the quota
 * used live in Redis, and every admission is one Lua script (limiter-scripts.ts), so N instances enforce one set
 * of limits exactly. A request's reservation and slot are a lease that this instance renews while the request
 * runs: if the instance dies, they come back when the lease expires.
 *
 * Redis unreachable: admission fails closed with a 503 (never an unlimited pass), and a later call reconnects.
 * With a `fallback` (fail-open), an instance instead admits against its share of each limit in process: every instance
 * registers itself in Redis while it can (instance-registry.ts, renewed with the leases), and a limit is divided by
 * the number of instances last seen, so N instances together never exceed it. A share that comes
 * to nothing (a concurrency of 2 over 3 instances) still answers 503. Usage settled meanwhile is added to Redis
 * once it is back (counted again if Redis lost its state and re-read the database: stricter, never looser).
 * Settlement is sent without waiting (one connection keeps commands in order, so the next admission of the key
 * sees it); one that cannot reach Redis is logged, and the lease gives its reservation back when it expires.
 *
 * Redis that comes back empty (restarted without persistence) loses nothing that must survive (docs/scaling.md,
 * "Redis persistence"): the registry's generation changes, so every instance registers its running calls
 * again (at once on reconnecting, or at its next renewal) before it registers itself; and a key with no state is
 * built from the record (`history`: quota used, the day's ledger rows, plus the running leases) once every
 * instance that was registered before the change is registered again or its registration expired, so no running
 * call of another instance is missing from the count. RPM buckets start full.
 */
import { RedisClient } from "bun";
import { AppError } from "../../errors";
import { DAY_MS, type AdmitOptions, type AdmitResult, type KeyLimits, type LimiterHistory, type LimitCode, type LimiterStore, type RecordedUsage, type Reservation } from "../../gateway/limits/limiter-store";
import { randomToken } from "../../secrets";
import { RedisScripts } from "./redis-scripts";
import { ADMIT, FORGET, INSTANCES, REREGISTER, RENEW, SETTLE } from "./limiter-scripts";
import { redisConnectError } from "./connect-errors";
import { RedisInstanceRegistry } from "./instance-registry";

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
  /**
   * What the record says a key used, read when Redis holds no state for it (first use, or Redis came back
   * empty). Absent: the key cache's recorded totals, and no requests counted against the day.
   */
  history?: LimiterHistory;
  /** How long an admission waits for the other instances to register their running calls again (then 503). */
  peerWaitMs?: number;
}

interface LocalLease {
  id: string | null;
  reserve: Reservation;
  slot: boolean;
  counted: boolean;
  /** Admitted by the in-process fallback during an outage (fail-open): settled there. */
  local: boolean;
}

const unavailable = () =>
  new AppError("service_unavailable", "Rate limiting is unavailable right now; retry shortly.", { headers: { "retry-after": "1" } });

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_STATE_TTL_MS = 2 * 86_400_000;

/** How long a connection to Redis may take to be established. */
const CONNECT_TIMEOUT_MS = 2000;

export class RedisLimiter implements LimiterStore {
  private readonly client: RedisClient;
  private readonly url: string;
  private readonly scripts: RedisScripts;
  private readonly leases = new Map<string, LocalLease[]>();
  private inFlightTotal = 0;
  private readonly leaseMs: number;
  private readonly stateTtlMs: number;
  private readonly reportError: (err: unknown) => void;
  private readonly onRecover: () => void;
  private down = false;
  private readonly registry: RedisInstanceRegistry;
  private readonly fallback: LimiterStore | null;
  /** Usage settled by the fallback that Redis has not been told yet. */
  private backlog: { keyId: string; tokens: number; cost: number }[] = [];
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  /** Keys this instance has admitted for (forget() considers only those). */
  private readonly known = new Set<string>();
  private readonly history: LimiterHistory | null;
  /** Lease ids settled while this instance was registering its leases again (sent again once it is done). */
  private settledDuringReregister: { keyId: string; id: string }[] | null = null;

  constructor(url: string, options: RedisLimiterOptions = {}) {
    // No offline queue: while Redis is down, commands fail at once instead of waiting forever.
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: CONNECT_TIMEOUT_MS, autoReconnect: true, maxRetries: 3 });
    this.url = url;
    this.scripts = new RedisScripts(this.client);
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.stateTtlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS;
    this.reportError = options.onError ?? (() => {});
    this.onRecover = options.onRecover ?? (() => {});
    this.fallback = options.fallback ?? null;
    this.history = options.history ?? null;
    this.registry = new RedisInstanceRegistry({
      runScript: (source, keys, args) => this.script(source, keys, args),
      leaseMs: this.leaseMs,
      onNewGeneration: () => this.reregisterLeases(),
      peerWaitMs: options.peerWaitMs ?? 2000,
    });
    // A reconnect may be to a Redis that came back empty: the running calls are registered again at once.
    this.client.onconnect = () => {
      if (this.registry.hasRegistered()) void this.renew();
    };
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref?.();
  }

  /** Connects; resolves once Redis answers (a server start fails early on a wrong URL). */
  async start(): Promise<void> {
    // The driver says "connection closed" for every failed connect, a wrong password included: say which it was.
    await this.scripts.connected().catch(async (err) => {
      throw await redisConnectError(this.url, err, CONNECT_TIMEOUT_MS);
    });
    // Loaded up front, so a settlement's script is never still loading when the next admission is sent.
    for (const source of [ADMIT, SETTLE, RENEW, REREGISTER, FORGET, INSTANCES]) await this.scripts.load(source);
    await this.registry.register();
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

  /** Registers every running lease of this instance again (those Redis still holds are only renewed). */
  private async reregisterLeases(): Promise<void> {
    this.settledDuringReregister = [];
    try {
      for (const [keyId, list] of this.leases) {
        const args = list.flatMap((l) => (l.id ? [l.id, String(l.reserve.tokens), String(l.reserve.cost), l.slot ? "1" : "0"] : []));
        if (args.length > 0) await this.script(REREGISTER, this.keys(keyId), [String(this.leaseMs), String(this.stateTtlMs), ...args]);
      }
    } finally {
      // A lease settled meanwhile may have been registered again after its settlement: given back once more.
      const settled = this.settledDuringReregister;
      this.settledDuringReregister = null;
      for (const { keyId, id } of settled) this.script(SETTLE, this.keys(keyId), [id, "0", "0", "0"]).catch((err) => this.onError(err));
    }
  }

  /** The number of instances the limits are shared by, as last seen in Redis. */
  instanceCount(): number {
    return this.registry.count();
  }

  private script(source: string, keys: string[], args: string[]): Promise<unknown> {
    return this.scripts.run(source, keys, args);
  }

  private keys(keyId: string): string[] {
    const tag = `{gk:${keyId}}`;
    return [`${tag}:s`, `${tag}:l`, `${tag}:r`];
  }

  async admit(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    const leaseId = randomToken(12);
    this.known.add(keyId);
    const n = (v: number | null) => (v === null ? "-1" : String(v));
    const run = (history: string[]) =>
      this.script(ADMIT, this.keys(keyId), [
        String(now), n(limits.rpm), n(limits.rpd), n(limits.concurrency), n(limits.quotaTokens), n(limits.balance),
        String(recorded.tokens), String(recorded.spent), recorded.since === null ? "n" : String(recorded.since),
        String(reserve.tokens), String(reserve.cost), opts.concurrency ? "1" : "0", opts.quota ? "1" : "0",
        leaseId, String(this.leaseMs), String(this.stateTtlMs), ...history,
      ]) as Promise<string[]>;
    let reply: string[];
    try {
      reply = await run(this.history ? ["ask", "0", "0", "0"] : ["given", String(recorded.tokens), String(recorded.spent), "0"]);
    } catch (err) {
      return this.unreachable(err, keyId, limits, recorded, reserve, now, opts);
    }
    if (reply[0] === "history") {
      // Rare (a key's first use, or Redis came back empty): one look at the record, then the same script again,
      // once every instance registered before Redis came back empty has registered its running calls again.
      let peersBack: boolean;
      try {
        peersBack = await this.registry.awaitPeers();
      } catch (err) {
        // Redis gone meanwhile: as any outage.
        return this.unreachable(err, keyId, limits, recorded, reserve, now, opts);
      }
      // Redis answers but the others have not registered again yet: 503.
      if (!peersBack) throw unavailable();
      const h = await this.historyOf(keyId, now);
      try {
        reply = await run(["given", String(h.tokens), String(h.spent), String(h.requests)]);
      } catch (err) {
        return this.unreachable(err, keyId, limits, recorded, reserve, now, opts);
      }
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

  /** Admissions of one key that need its history at the same moment (a burst on a new key) share one read. */
  private readonly historyReads = new Map<string, ReturnType<LimiterHistory["usage"]>>();

  private historyOf(keyId: string, now: number): ReturnType<LimiterHistory["usage"]> {
    let read = this.historyReads.get(keyId);
    if (!read) {
      read = this.history!.usage(keyId, now - DAY_MS).finally(() => this.historyReads.delete(keyId));
      this.historyReads.set(keyId, read);
    }
    return read;
  }

  private unreachable(err: unknown, keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    this.onError(err);
    // Fail closed: without the shared counters no limit can be enforced, so nothing is admitted (unless the
    // operator chose fail-open: then this instance's share of each limit, counted here).
    if (this.fallback) return this.admitLocally(keyId, limits, recorded, reserve, now, opts);
    throw unavailable();
  }

  /** Fail-open admission: the in-process limiter with every limit cut to this instance's share. */
  private async admitLocally(keyId: string, limits: KeyLimits, recorded: RecordedUsage, reserve: Reservation, now: number, opts: AdmitOptions): Promise<AdmitResult> {
    const n = this.registry.count();
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
    if (lease?.id) this.settledDuringReregister?.push({ keyId, id: lease.id });
    this.script(SETTLE, this.keys(keyId), [lease?.id ?? "", String(used.tokens), String(used.cost), lease?.counted ? "1" : "0"]).catch((err) => this.onError(err));
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

  private renewAgain = false;

  private async renew(): Promise<void> {
    // A tick while Redis is slow to answer must not start a second round; a reconnect meanwhile asks for one more.
    if (this.renewing) {
      this.renewAgain = true;
      return;
    }
    this.renewing = true;
    try {
      do {
        this.renewAgain = false;
        await this.renewRound();
      } while (this.renewAgain && this.renewTimer);
    } finally {
      this.renewing = false;
    }
  }

  private async renewRound(): Promise<void> {
    try {
      await this.registry.register();
      this.ok();
    } catch (err) {
      this.onError(err);
      return;
    }
    // Usage the fail-open fallback settled during an outage.
    while (this.backlog.length > 0) {
      const { keyId, tokens, cost } = this.backlog[0]!;
      try {
        await this.script(SETTLE, this.keys(keyId), ["", String(tokens), String(cost), "0"]);
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
      void this.registry
        .leave()
        .catch(() => {})
        .finally(() => this.client.close());
    } else this.client.close();
  }
}
