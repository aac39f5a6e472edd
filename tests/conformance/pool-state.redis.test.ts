/**
 * The PoolStateStore suite against Redis (a real server started for the run), then what only a shared store must
 * show: two instances on one Redis see each other's cooldowns, probes and streams; an instance that dies stops
 * counting when its lease passes; a Redis restarted empty gets the running streams back; and an unreachable Redis
 * leaves every account usable (the in-process fallback) and is reported once.
 */
import { describe, expect, test } from "bun:test";
import { MemoryPoolState } from "../../src/gateway/upstream/pool-state-memory";
import { RedisPoolState, type RedisPoolStateOptions } from "../../src/store/redis/pool-state";
import { pollUntil } from "../support/poll";
import { redisUnavailable, redisUrl, startRedisServer } from "../support/redis";
import { poolStateConformance, testClock } from "./pool-state.suite";

const unavailable = redisUnavailable();

function open(url: string, options: Partial<RedisPoolStateOptions> = {}): RedisPoolState {
  return new RedisPoolState(url, { fallback: () => new MemoryPoolState(options.now), ...options });
}

if (unavailable) {
  console.warn(`Redis pool state tests skipped: ${unavailable}`);
  test.skip(`Redis pool state tests: ${unavailable}`, () => {});
} else {
  poolStateConformance("Redis", async (clock) => {
    const store = open(await redisUrl(), { now: clock.now });
    return { store, close: () => store.close() };
  });

  describe("Redis pool state shared by instances", () => {
    test("two instances see each other's cooldowns, disabling, probe claims and streams", async () => {
      const url = await redisUrl();
      const clock = testClock();
      const [a, b] = [open(url, { now: clock.now }), open(url, { now: clock.now })];
      try {
        const name = `acct-${crypto.randomUUID()}`;
        const t = clock.now();
        await a.cool(name, null, t + 30_000, "rate_limited");
        await b.cool(name, null, t + 10_000, "rate_limited");
        await b.cool(name, "gpt-a", t + 40_000, "rate_limited");
        expect((await b.read([name])).get(name)).toMatchObject({ coolingUntil: t + 30_000, modelCoolingUntil: { "gpt-a": t + 40_000 } });
        expect((await a.read([name])).get(name)).toMatchObject({ coolingUntil: t + 30_000, modelCoolingUntil: { "gpt-a": t + 40_000 } });
        await a.disable(name, "disabled by an operator", true);
        expect((await b.read([name])).get(name)!.disabled).toEqual({ reason: "disabled by an operator", manual: true });
        await b.enable(name);
        expect((await a.read([name])).get(name)!.disabled).toBeNull();
        const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimProbe(name, 60_000)));
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(await a.adjustInFlight(name, 1)).toBe(1);
        expect(await b.adjustInFlight(name, 1)).toBe(2);
        expect(await b.adjustInFlight(name, 1)).toBe(3);
        expect((await a.read([name])).get(name)!.inFlight).toBe(3);
        expect(await a.adjustInFlight(name, -1)).toBe(2);
        // The window is shared too: the failures of both count against the account.
        await a.recordOutcome(name, true, t, 60_000);
        expect(await b.recordOutcome(name, true, t, 60_000)).toEqual({ failures: 2, requests: 2 });
      } finally {
        a.close();
        b.close();
      }
    });

    test("an instance that dies stops counting its streams once its lease passes; one that stops cleanly at once", async () => {
      const url = await redisUrl();
      const name = `acct-${crypto.randomUUID()}`;
      const survivor = open(url, { leaseMs: 60_000 });
      const dying = open(url, { leaseMs: 400 });
      const leaving = open(url, { leaseMs: 60_000 });
      try {
        await survivor.adjustInFlight(name, 1);
        await dying.adjustInFlight(name, 1);
        expect(await leaving.adjustInFlight(name, 1)).toBe(3);
        leaving.close();
        await pollUntil(async () => (await survivor.read([name])).get(name)!.inFlight, (n) => n === 2, { what: "the stopped instance's stream to leave the sum" });
        // Dies: no more renewals, no goodbye.
        const inside = dying as unknown as { renewTimer: ReturnType<typeof setInterval> | null; client: { close(): void } };
        clearInterval(inside.renewTimer!);
        inside.renewTimer = null;
        inside.client.close();
        const { elapsedMs } = await pollUntil(async () => (await survivor.read([name])).get(name)!.inFlight, (n) => n === 1, { what: "the dead instance's lease to pass", timeoutMs: 10_000 });
        expect(elapsedMs).toBeLessThan(5_000);
      } finally {
        survivor.close();
      }
    });

    test("Redis restarted empty: cooldowns are gone, the running streams come back with the next renewal", { timeout: 30_000 }, async () => {
      const redis = await startRedisServer();
      const errors: unknown[] = [];
      const name = "primary";
      const a = open(redis.url, { leaseMs: 600, onError: (e) => errors.push(e) });
      const b = open(redis.url, { leaseMs: 600 });
      try {
        await a.adjustInFlight(name, 1);
        await a.adjustInFlight(name, 1);
        await a.cool(name, null, Date.now() + 60_000, "rate_limited");
        await redis.restart();
        const back = await pollUntil(async () => (await b.read([name]).catch(() => null))?.get(name)?.inFlight, (n) => n === 2, { what: "the streams to be registered again", timeoutMs: 10_000 });
        expect(back.value).toBe(2);
        expect((await b.read([name])).get(name)!.coolingUntil).toBeNull();
      } finally {
        a.close();
        b.close();
        await redis.stop();
      }
    });

    test("Redis unreachable: accounts read healthy, this instance's own findings and streams still count, and the outage is reported once", async () => {
      const errors: unknown[] = [];
      const clock = testClock();
      const s = open("redis://127.0.0.1:1", { now: clock.now, onError: (e) => errors.push(e) });
      try {
        expect((await s.read(["primary"])).get("primary")).toEqual({ coolingUntil: null, modelCoolingUntil: {}, disabled: null, probing: false, reason: null, inFlight: 0 });
        expect(await s.adjustInFlight("primary", 1)).toBe(1);
        await s.cool("primary", null, clock.now() + 5_000, "rate_limited");
        expect((await s.read(["primary"])).get("primary")).toMatchObject({ coolingUntil: clock.now() + 5_000, inFlight: 1 });
        expect(await s.claimProbe("primary", 1_000)).toBe(true);
        expect(await s.recordOutcome("primary", true, clock.now(), 60_000)).toEqual({ failures: 1, requests: 1 });
        expect(errors).toHaveLength(1);
      } finally {
        s.close();
      }
    });
  });
}
