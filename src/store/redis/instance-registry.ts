/**
 * The instances that share one Redis, as the Redis limiter (limiter.ts) needs to know them: each registers itself
 * in a sorted set of instance ids (renewed with its leases, expiring after one lease), so a fail-open limit can be
 * divided by the number of instances last seen. Redis's data carries a generation, a random token set when none is
 * there: a Redis that came back empty (restarted without persistence) has a new one. On a new generation this
 * instance first registers its running calls again (`onNewGeneration`, the limiter's), then itself; and the
 * instances registered before the change, still within their lease, are awaited: until each has registered again
 * (or its registration expired: it is gone), a key's state must not be built from the record, since their running
 * calls may be missing from it.
 */
import { randomToken } from "../../secrets";
import { INSTANCES } from "./limiter-scripts";

/** Runs one of the limiter's Lua scripts (limiter.ts loads them and reloads them after a Redis restart). */
export type RunScript = (source: string, keys: string[], args: string[]) => Promise<unknown>;

export interface InstanceRegistryOptions {
  runScript: RunScript;
  /** How long a registration lives without renewal. */
  leaseMs: number;
  /** Registers this instance's running calls again; runs before the instance registers in a new generation. */
  onNewGeneration: () => Promise<void>;
  /** How long `awaitPeers` waits for the instances of the previous generation. */
  peerWaitMs: number;
}

// One hash tag, so the registry script touches one slot (as a Redis Cluster requires).
const INSTANCES_KEYS = ["{gantry}:instances", "{gantry}:generation"];

/** How many generation changes one registration takes in before it counts the instances anyway (a bound, should the generation keep changing). */
const GENERATION_ATTEMPTS = 3;

export class RedisInstanceRegistry {
  private readonly instanceId = randomToken(12);
  /** Instances registered in Redis when it last answered (this one included). */
  private instances = 1;
  /** The generation of Redis's data this instance is registered in (null before the first registration). */
  private generation: string | null = null;
  /** The other instances registered at the last look, with their expiry (Redis time, ms). */
  private peers = new Map<string, number>();
  /**
   * After a generation change: the instances registered before it that have not registered again, with their
   * old expiry. A key is not built from the record while one of them may still hold running calls.
   */
  private awaited: Map<string, number> | null = null;
  private registering: Promise<void> | null = null;

  constructor(private readonly options: InstanceRegistryOptions) {}

  /** Whether this instance has registered once (a reconnect before that has nothing to register again). */
  hasRegistered(): boolean {
    return this.generation !== null;
  }

  /** The number of instances the limits are shared by, as last seen in Redis. */
  count(): number {
    return this.instances;
  }

  /**
   * Keeps this instance in the registry and reads how many instances share the limits. When Redis's generation
   * changed (it came back empty), registers this instance's running calls again first. Calls overlapping one
   * in progress share it.
   */
  register(): Promise<void> {
    this.registering ??= this.registerOnce().finally(() => {
      this.registering = null;
    });
    return this.registering;
  }

  private async registerOnce(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const reply = (await this.runInstances("1")) as string[];
      const [generation, nowText, ...members] = reply;
      const now = Number(nowText);
      if (generation !== this.generation && attempt < GENERATION_ATTEMPTS) {
        // Those registered before the change, still within their lease, may hold calls not yet registered again.
        if (this.generation !== null) {
          this.awaited ??= new Map();
          for (const [id, expiry] of this.peers) if (expiry > now) this.awaited.set(id, expiry);
        }
        await this.options.onNewGeneration();
        this.generation = generation!;
        continue;
      }
      const present = new Map<string, number>();
      for (let i = 0; i + 1 < members.length; i += 2) if (members[i] !== this.instanceId) present.set(members[i]!, Number(members[i + 1]));
      this.peers = present;
      this.instances = present.size + 1;
      if (this.awaited) {
        for (const [id, expiry] of this.awaited) if (present.has(id) || expiry <= now) this.awaited.delete(id);
        if (this.awaited.size === 0) this.awaited = null;
      }
      return;
    }
  }

  /**
   * Waits, registering again every 20 ms, until every instance registered before Redis's generation changed has
   * registered again or expired. True when none is awaited; false once `peerWaitMs` has passed with some still
   * awaited. A failing registration (Redis unreachable) rejects.
   */
  async awaitPeers(): Promise<boolean> {
    const deadline = performance.now() + this.options.peerWaitMs;
    for (;;) {
      await this.register();
      if (!this.awaited) return true;
      if (performance.now() >= deadline) return false;
      await Bun.sleep(20);
    }
  }

  /** Leaves the registry, so the others' shares grow at once (the entry would expire anyway). */
  leave(): Promise<unknown> {
    return this.runInstances("0");
  }

  private runInstances(present: "1" | "0"): Promise<unknown> {
    return this.options.runScript(INSTANCES, INSTANCES_KEYS, [this.instanceId, String(this.options.leaseMs), present, this.generation ?? "", randomToken(12)]);
  }
}
