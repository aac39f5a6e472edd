/**
 * The Redis instance registry on its own (store/redis/instance-registry.ts), against an in-memory stand-in for the
 * registry's Lua script: counting instances, a Redis that comes back empty (running calls registered again before
 * the instance, the instances of before awaited), leaving, and a Redis that does not answer. The same code on a real
 * Redis is covered by tests/conformance/limiter.redis.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { RedisInstanceRegistry, type RunScript } from "../../src/store/redis/instance-registry";
import { INSTANCES } from "../../src/store/redis/limiter-scripts";

/** What the INSTANCES script keeps in Redis, and the script itself over it (limiter-scripts.ts says what it does). */
function fakeRedis() {
  const state = { now: 1_000_000, generation: null as string | null, members: new Map<string, number>(), down: false };
  const runScript: RunScript = async (source, _keys, args) => {
    if (state.down) throw new Error("connection closed");
    expect(source).toBe(INSTANCES);
    const [id, leaseMs, present, knownGeneration, newGeneration] = args as [string, string, string, string, string];
    state.generation ??= newGeneration;
    if (present !== "1") state.members.delete(id);
    else if (knownGeneration === state.generation) state.members.set(id, state.now + Number(leaseMs));
    for (const [m, expiry] of state.members) if (expiry <= state.now) state.members.delete(m);
    return [state.generation, String(state.now), ...[...state.members].flatMap(([m, expiry]) => [m, String(expiry)])];
  };
  /** Redis restarted without persistence: no generation, no registrations. */
  const restartEmpty = () => {
    state.generation = null;
    state.members.clear();
  };
  return { state, runScript, restartEmpty };
}

function registry(redis: ReturnType<typeof fakeRedis>, peerWaitMs = 2000) {
  const calls = { reregistered: 0, registeredWhenReregistering: [] as number[] };
  const r: RedisInstanceRegistry = new RedisInstanceRegistry({
    runScript: redis.runScript,
    leaseMs: 30_000,
    peerWaitMs,
    onNewGeneration: async () => {
      calls.reregistered += 1;
      calls.registeredWhenReregistering.push(redis.state.members.size);
    },
  });
  return { r, calls };
}

describe("Redis instance registry", () => {
  test("the first registration takes in the generation, then registers: one instance", async () => {
    const redis = fakeRedis();
    const { r, calls } = registry(redis);
    expect(r.hasRegistered()).toBe(false);
    expect(r.count()).toBe(1);
    await r.register();
    expect(r.hasRegistered()).toBe(true);
    expect(calls.reregistered).toBe(1);
    expect(redis.state.members.size).toBe(1);
    expect(r.count()).toBe(1);
  });

  test("instances sharing one Redis count each other; one that leaves is no longer counted", async () => {
    const redis = fakeRedis();
    const a = registry(redis).r;
    const b = registry(redis).r;
    await a.register();
    await b.register();
    await a.register();
    expect([a.count(), b.count()]).toEqual([2, 2]);
    await b.leave();
    await a.register();
    expect(a.count()).toBe(1);
  });

  test("registrations calling in together share one round trip", async () => {
    const redis = fakeRedis();
    let scripts = 0;
    const counting: RunScript = (source, keys, args) => {
      scripts += 1;
      return redis.runScript(source, keys, args);
    };
    const r = new RedisInstanceRegistry({ runScript: counting, leaseMs: 30_000, peerWaitMs: 2000, onNewGeneration: async () => {} });
    await r.register();
    scripts = 0;
    await Promise.all([r.register(), r.register(), r.register()]);
    expect(scripts).toBe(1);
  });

  test("Redis back empty: running calls are registered again before the instance, and the instances of before are awaited", async () => {
    const redis = fakeRedis();
    const a = registry(redis);
    const b = registry(redis);
    await a.r.register();
    await b.r.register();
    await a.r.register();
    expect(await a.r.awaitPeers()).toBe(true);

    redis.restartEmpty();
    await a.r.register();
    // Its running calls went back into Redis while the instance itself was not yet registered in the new generation.
    expect(a.calls.reregistered).toBe(2);
    expect(a.calls.registeredWhenReregistering.at(-1)).toBe(0);
    expect(redis.state.members.size).toBe(1);

    // b, registered before, has not registered again: a key may not be built from the record yet.
    const waiting = a.r.awaitPeers();
    await b.r.register();
    expect(await waiting).toBe(true);
    expect(b.calls.reregistered).toBe(2);
    expect([a.r.count(), b.r.count()]).toEqual([2, 2]);
  });

  test("an instance of before that never registers again: awaiting it gives up after peerWaitMs; once its lease ran out it is not awaited", async () => {
    const redis = fakeRedis();
    const a = registry(redis, 50);
    const b = registry(redis);
    await a.r.register();
    await b.r.register();
    await a.r.register();
    redis.restartEmpty();
    expect(await a.r.awaitPeers()).toBe(false);
    // b's old registration expires (Redis time passes its lease): b is gone, nothing is awaited.
    redis.state.now += 30_001;
    expect(await a.r.awaitPeers()).toBe(true);
    expect(a.r.count()).toBe(1);
  });

  test("Redis not answering: registering and awaiting reject (the limiter treats it as an outage)", async () => {
    const redis = fakeRedis();
    const { r } = registry(redis);
    await r.register();
    redis.state.down = true;
    await expect(r.register()).rejects.toThrow("connection closed");
    await expect(r.awaitPeers()).rejects.toThrow("connection closed");
    redis.state.down = false;
    await r.register();
    expect(r.count()).toBe(1);
  });
});
