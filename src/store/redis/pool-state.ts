/**
 * The upstream pool's health state in Redis (GANTRY_REDIS_URL), shared by every instance: cooldowns, disabling,
 * the single probe of a recovering account, the rolling window of outcomes and the streams in flight per account.
 * Each change that could race is one Lua script (pool-state-scripts.ts).
 *
 * In flight: each instance counts its own streams in its process and writes the count (a value, never an
 * increment) to a hash of its own that expires with a lease; the instance is listed in `{gantry}:pool:instances`
 * with the lease's expiry, and the pool's figure is the sum over the live instances. So a count cannot go below
 * zero, and an instance that dies takes its streams out of the sum when its lease passes. While streams run, a timer
 * renews the lease by rewriting the hash whole, which also puts the counts back after a Redis that restarted empty.
 * A registry of its own rather than the limiter's: the pool's state must work (and its tests run) without the
 * limiter, and one more small sorted set costs nothing.
 *
 * A Redis that restarts empty loses the cooldowns, disabling and windows: accounts look healthy again and the
 * next failures cool them again (docs/scaling.md).
 *
 * Redis unreachable: the pool must never fail a call an account could serve, so the state falls back to a store in
 * this process (everything healthy to begin with, then this instance's own findings), and the in-flight counts to
 * this instance's own. The outage is reported once, and Redis is used again as soon as it answers.
 */
import { RedisClient } from "bun";
import type { AccountHealth, PoolStateStore } from "../../gateway/upstream/pool-port";
import { randomToken } from "../../secrets";
import { RedisScripts } from "./redis-scripts";
import { COOL, DISABLE, LEAVE, OUTCOME, PREFIX, READ, RENEW, FLUSH_IN_FLIGHT } from "./pool-state-scripts";

export interface RedisPoolStateOptions {
  /** How long an instance's in-flight counts outlive its last renewal (an instance that died stops counting after this). */
  leaseMs?: number;
  /** The clock the pool's deadlines are set with (the cooldowns compare against it). */
  now?: () => number;
  /**
   * A store in this process for while Redis cannot be reached (the in-process one, empty: every account healthy).
   * A new one is made after each outage.
   */
  fallback: () => PoolStateStore;
  /** Called once when Redis stops answering (not at every failed command of the outage). */
  onError?: (err: unknown) => void;
  /** Called once when Redis answers again after an outage. */
  onRecover?: () => void;
}

const DEFAULT_LEASE_MS = 30_000;
const CONNECT_TIMEOUT_MS = 2000;

const accountKey = (name: string) => `${PREFIX}a:${name}`;
const probeKey = (name: string) => `${PREFIX}p:${name}`;
const windowKey = (name: string) => `${PREFIX}w:${name}`;

export class RedisPoolState implements PoolStateStore {
  private readonly client: RedisClient;
  private readonly scripts: RedisScripts;
  private readonly instanceId = randomToken(12);
  private readonly ownKey = `${PREFIX}i:${this.instanceId}`;
  private readonly leaseMs: number;
  private readonly now: () => number;
  /** This instance's streams per account: the truth its hash in Redis mirrors. */
  private readonly local = new Map<string, number>();
  /** In-flight changes not written to Redis yet, each waiting for its account's total. */
  private unwritten: Array<{ name: string; mine: number; resolve: (total: number) => void }> = [];
  private flushing: Promise<void> | null = null;
  /** Answers while Redis cannot; started afresh after each outage, so old findings do not outlive it. */
  private fallback: PoolStateStore;
  private down = false;
  private renewTimer: ReturnType<typeof setInterval> | null;

  constructor(
    url: string,
    private readonly options: RedisPoolStateOptions,
  ) {
    // No offline queue: while Redis is down, commands fail at once (and the fallback answers) instead of waiting.
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: CONNECT_TIMEOUT_MS, autoReconnect: true, maxRetries: 3 });
    this.scripts = new RedisScripts(this.client);
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.now = options.now ?? Date.now;
    this.fallback = options.fallback();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref?.();
  }

  async read(names: readonly string[]): Promise<Map<string, AccountHealth>> {
    let reply: string[];
    try {
      reply = (await this.script(READ, [], [String(this.now()), ...names])) as string[];
    } catch (err) {
      this.failed(err);
      const healths = await this.fallback.read(names);
      for (const [name, h] of healths) healths.set(name, { ...h, inFlight: this.local.get(name) ?? 0 });
      return healths;
    }
    this.recovered();
    const out = new Map<string, AccountHealth>();
    let i = 0;
    for (const name of names) {
      const [until, reason, disabled, manual, probing, inFlight, modelCount] = reply.slice(i, i + 7);
      i += 7;
      const modelCoolingUntil: Record<string, number> = {};
      for (let m = 0; m < Number(modelCount); m++, i += 2) modelCoolingUntil[reply[i]!] = Number(reply[i + 1]);
      out.set(name, {
        coolingUntil: until ? Number(until) : null,
        modelCoolingUntil,
        disabled: disabled ? { reason: disabled, manual: manual === "1" } : null,
        probing: probing === "1",
        reason: reason || null,
        inFlight: Number(inFlight),
      });
    }
    return out;
  }

  async cool(name: string, model: string | null, untilMs: number, reason: string): Promise<void> {
    const field = model === null ? "until" : `m:${model}`;
    await this.guarded(
      () => this.script(COOL, [accountKey(name)], [field, String(Math.round(untilMs)), reason, String(this.now())]),
      () => this.fallback.cool(name, model, untilMs, reason),
    );
  }

  async disable(name: string, reason: string, manual: boolean): Promise<void> {
    await this.guarded(
      () => this.script(DISABLE, [accountKey(name)], [reason, manual ? "1" : "0"]),
      () => this.fallback.disable(name, reason, manual),
    );
  }

  async enable(name: string): Promise<void> {
    await this.guarded(
      () => this.command("DEL", [accountKey(name), probeKey(name), windowKey(name)]),
      () => this.fallback.enable(name),
    );
  }

  async claimProbe(name: string, ttlMs: number): Promise<boolean> {
    return this.guarded(
      async () => (await this.command("SET", [probeKey(name), this.instanceId, "PX", String(Math.max(1, Math.round(ttlMs))), "NX"])) !== null,
      () => this.fallback.claimProbe(name, ttlMs),
    );
  }

  async recordOutcome(name: string, failed: boolean, nowMs: number, windowMs: number): Promise<{ failures: number; requests: number }> {
    const second = Math.floor(nowMs / 1000);
    const oldest = Math.floor((nowMs - windowMs) / 1000);
    return this.guarded(
      async () => {
        const [failures, requests] = (await this.script(OUTCOME, [windowKey(name)], [String(second), String(oldest), failed ? "1" : "0", String(windowMs + 1000)])) as number[];
        return { failures: Number(failures), requests: Number(requests) };
      },
      () => this.fallback.recordOutcome(name, failed, nowMs, windowMs),
    );
  }

  async adjustInFlight(name: string, delta: 1 | -1): Promise<number> {
    const mine = Math.max(0, (this.local.get(name) ?? 0) + delta);
    if (mine === 0) this.local.delete(name);
    else this.local.set(name, mine);
    // Written with every other change made meanwhile: one script call per round trip, not two per call.
    return new Promise<number>((resolve) => {
      this.unwritten.push({ name, mine, resolve });
      this.flushing ??= this.flushInFlight();
    });
  }

  /** Writes this instance's counts until no change is left unwritten; each change learns its account's total. */
  private async flushInFlight(): Promise<void> {
    // Changes made in the same turn of the event loop go together.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.unwritten.length > 0) {
      const batch = this.unwritten;
      this.unwritten = [];
      const names = [...new Set(batch.map((c) => c.name))];
      const pairs = [...this.local].flatMap(([name, n]) => [name, String(n)]);
      const totals = await this.guarded(
        async () => ((await this.script(FLUSH_IN_FLIGHT, [this.ownKey], [this.instanceId, String(this.leaseMs), String(names.length), ...names, ...pairs])) as number[]).map(Number),
        async () => null,
      );
      for (const c of batch) c.resolve(totals ? totals[names.indexOf(c.name)]! : c.mine);
    }
    this.flushing = null;
  }

  /** Stops renewing and leaves the registry (best effort: the lease expires anyway). */
  close(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    if (this.client.connected) {
      void this.script(LEAVE, [this.ownKey], [this.instanceId])
        .catch(() => {})
        .finally(() => this.client.close());
    } else this.client.close();
  }

  /** Keeps this instance's counts alive while it has streams (and writes them back after an empty restart). */
  private async renew(): Promise<void> {
    if (this.local.size === 0) return;
    const pairs = [...this.local].flatMap(([name, n]) => [name, String(n)]);
    await this.guarded(
      () => this.script(RENEW, [this.ownKey], [this.instanceId, String(this.leaseMs), ...pairs]),
      async () => 0,
    );
  }

  private async guarded<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await shared();
    } catch (err) {
      this.failed(err);
      return local();
    }
    this.recovered();
    return result;
  }

  private failed(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.options.onError?.(err);
  }

  private recovered(): void {
    if (!this.down) return;
    this.down = false;
    this.fallback = this.options.fallback();
    this.options.onRecover?.();
  }

  private async command(name: string, args: string[]): Promise<unknown> {
    await this.scripts.connected();
    return this.client.send(name, args);
  }

  private script(source: string, keys: string[], args: string[]): Promise<unknown> {
    return this.scripts.run(source, keys, args);
  }
}
