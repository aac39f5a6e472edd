/**
 * The LimiterStore suite against Redis (a real server started for the run), then what only a shared limiter
 * must show: two instances' limiters on one Redis enforce one limit, a dead instance's slots come back when its
 * leases expire, an unreachable Redis refuses admissions (fail closed) with a 503, and with fail-open each
 * instance admits only its share of each limit until Redis is back.
 */
import { describe, expect, test } from "bun:test";
import { isAppError } from "../../src/errors";
import type { AdmitResult, KeyLimits, RecordedUsage } from "../../src/gateway/limits/limiter";
import { InProcessLimiter } from "../../src/gateway/limits/limiter";
import { RedisLimiter } from "../../src/store/redis/limiter";
import { pollUntil } from "../support/poll";
import { redisUnavailable, redisUrl, startRedisServer } from "../support/redis";
import { limiterConformance } from "./limiter.suite";

const unavailable = redisUnavailable();
const NONE: KeyLimits = { rpm: null, rpd: null, concurrency: null, quotaTokens: null, balance: null };
const FRESH: RecordedUsage = { tokens: 0, spent: 0, since: null };
const GENERATE = { concurrency: true, quota: true };
const R = { tokens: 100, cost: 0 };

async function limiter(leaseMs?: number): Promise<RedisLimiter> {
  const l = new RedisLimiter(await redisUrl(), { leaseMs });
  await l.start();
  return l;
}

if (unavailable) {
  console.warn(`Redis limiter tests skipped: ${unavailable}`);
  test.skip(`Redis limiter tests: ${unavailable}`, () => {});
} else {
  limiterConformance("Redis", async () => {
    const l = await limiter();
    return { limiter: l, close: () => l.close() };
  });

  describe("Redis limiter shared by instances", () => {
    const keyId = () => `shared-${crypto.randomUUID()}`;

    test("three instances' limiters admit exactly the RPM and the concurrency of one key, and no more", async () => {
      const instances = await Promise.all([limiter(), limiter(), limiter()]);
      try {
        const k = keyId();
        const rpm = await Promise.all(
          Array.from({ length: 300 }, (_, i) => instances[i % 3]!.admit(k, { ...NONE, rpm: 100 }, FRESH, R, 0, { concurrency: false, quota: false })),
        );
        expect(rpm.filter((r) => r.ok)).toHaveLength(100);
        const c = keyId();
        const conc = await Promise.all(Array.from({ length: 60 }, (_, i) => instances[i % 3]!.admit(c, { ...NONE, concurrency: 7 }, FRESH, R, 0, GENERATE)));
        expect(conc.filter((r) => r.ok)).toHaveLength(7);
      } finally {
        for (const l of instances) l.close();
      }
    });

    test("a quota is shared: what one instance settled counts on the others", async () => {
      const [a, b] = await Promise.all([limiter(), limiter()]);
      try {
        const k = keyId();
        const limits = { ...NONE, quotaTokens: 250 };
        expect((await a.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
        a.settle(k, R, { tokens: 260, cost: 0 }, false);
        await pollUntil(async () => (await b.admit(k, limits, FRESH, { tokens: 0, cost: 0 }, 0, { concurrency: false, quota: true })).ok, (ok) => !ok, {
          what: "the other instance to see the settled use",
        });
      } finally {
        a.close();
        b.close();
      }
    });

    test("an instance that dies holding slots gives them back when its leases expire", async () => {
      const dying = await limiter(300);
      const survivor = await limiter(300);
      try {
        const k = keyId();
        const limits = { ...NONE, concurrency: 2 };
        expect((await dying.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
        expect((await dying.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
        dying.close(); // no settle, no renewal: as after SIGKILL
        expect((await survivor.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(false);
        const back = await pollUntil(async () => (await survivor.admit(k, limits, FRESH, R, 0, { concurrency: true, quota: false })).ok, Boolean, {
          what: "the dead instance's slots to come back",
        });
        expect(back.elapsedMs).toBeLessThan(5000);
      } finally {
        survivor.close();
      }
    });

    test("a running request's lease is renewed, so it keeps its slot past one lease lifetime", async () => {
      const l = await limiter(300);
      try {
        const k = keyId();
        const limits = { ...NONE, concurrency: 1 };
        expect((await l.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
        // Three lease lifetimes later, measured by the refusals themselves (no fixed sleep): still held.
        const started = performance.now();
        while (performance.now() - started < 900) expect((await l.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(false);
        l.settle(k, R, { tokens: 0, cost: 0 }, true);
        await pollUntil(async () => (await l.admit(k, limits, FRESH, R, 0, GENERATE)).ok, Boolean, { what: "the settled slot" });
      } finally {
        l.close();
      }
    });

    test("Redis unreachable: admission fails closed with a 503 and Retry-After", async () => {
      const l = new RedisLimiter("redis://127.0.0.1:1", {});
      try {
        const err = await l.admit(keyId(), { ...NONE, rpm: 10 }, FRESH, R, 0, GENERATE).then(
          () => null,
          (e) => e,
        );
        expect(isAppError(err)).toBe(true);
        expect(err).toMatchObject({ status: 503, code: "service_unavailable", headers: { "retry-after": "1" } });
      } finally {
        l.close();
      }
    });

    test("fail-open: while Redis is down each of three instances admits its share of a limit, and Redis takes over again when back", { timeout: 30_000 }, async () => {
      const redis = await startRedisServer();
      const errors: string[] = [];
      let recovered = 0;
      const instances: RedisLimiter[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          const l = new RedisLimiter(redis.url, { leaseMs: 600, fallback: new InProcessLimiter(), onError: (e) => errors.push(String(e)), onRecover: () => recovered++ });
          await l.start();
          instances.push(l);
        }
        // Each learns how many share the limits at its next renewal.
        await pollUntil(() => instances.map((l) => l.instanceCount()), (n) => n.every((c) => c === 3), { timeoutMs: 10_000, what: "three instances registered" });
        await redis.down();
        const k = keyId();
        const rpm = await Promise.all(
          Array.from({ length: 300 }, (_, i) => instances[i % 3]!.admit(k, { ...NONE, rpm: 100 }, FRESH, R, 0, { concurrency: false, quota: false })),
        );
        // floor(100 / 3) on each: never more than the limit across instances.
        expect(rpm.filter((r) => r.ok)).toHaveLength(99);
        // A quota of 1,000 with 400 used: each may use a third of the 600 left.
        const q = keyId();
        const quotaLimits = { ...NONE, quotaTokens: 1000 };
        const used = { tokens: 400, spent: 0, since: null };
        const first = await instances[0]!.admit(q, quotaLimits, used, { tokens: 150, cost: 0 }, 0, GENERATE);
        expect(first.ok).toBe(true);
        instances[0]!.settle(q, { tokens: 150, cost: 0 }, { tokens: 200, cost: 0 }, false);
        const second = await instances[0]!.admit(q, quotaLimits, used, { tokens: 10, cost: 0 }, 0, GENERATE);
        expect(second).toMatchObject({ ok: false, code: "quota_exceeded" });
        // A concurrency of 2 has no share for each of 3: refused as unavailable, not granted.
        const err = await instances[1]!.admit(keyId(), { ...NONE, concurrency: 2 }, FRESH, R, 0, GENERATE).then(() => null, (e) => e);
        expect(err).toMatchObject({ status: 503, code: "service_unavailable" });
        expect(errors.length).toBeGreaterThanOrEqual(1);
        expect(errors.length).toBeLessThanOrEqual(3); // one line per instance and outage, not one per request

        await redis.up();
        // Back on Redis: the shared bucket (fresh after the restart) admits the whole limit again.
        await pollUntil(() => recovered, (n) => n === 3, { timeoutMs: 10_000, what: "every instance back on Redis" });
        const k2 = keyId();
        const again = await Promise.all(
          Array.from({ length: 150 }, (_, i) => instances[i % 3]!.admit(k2, { ...NONE, rpm: 100 }, FRESH, R, 0, { concurrency: false, quota: false })),
        );
        expect(again.filter((r) => r.ok)).toHaveLength(100);
      } finally {
        for (const l of instances) l.close();
        await redis.stop();
      }
    });

    test("Redis restarted empty: running calls are registered again, and the day's requests and the quota come back from the record", { timeout: 30_000 }, async () => {
      const redis = await startRedisServer();
      // The record (the database): every settled call is a ledger row and adds to its key's totals.
      const rows = new Map<string, number>();
      const used = new Map<string, number>();
      const history = { usage: async (k: string) => ({ tokens: used.get(k) ?? 0, spent: 0, requests: rows.get(k) ?? 0 }) };
      const a = new RedisLimiter(redis.url, { leaseMs: 3000, history });
      const b = new RedisLimiter(redis.url, { leaseMs: 3000, history });
      const settle = (l: RedisLimiter, k: string, tokens: number, slot = true) => {
        l.settle(k, R, { tokens, cost: 0 }, slot);
        rows.set(k, (rows.get(k) ?? 0) + 1);
        used.set(k, (used.get(k) ?? 0) + tokens);
      };
      try {
        await a.start();
        await b.start();
        await pollUntil(() => [a.instanceCount(), b.instanceCount()], (n) => n.every((c) => c === 2), { timeoutMs: 10_000, what: "both instances registered" });
        // Three calls of a concurrency-3 key running (two on b, one on a), a day's 5 requests spent, a quota spent.
        const c = keyId();
        const conc = { ...NONE, concurrency: 3 };
        for (const l of [b, b, a]) expect((await l.admit(c, conc, FRESH, R, 0, GENERATE)).ok).toBe(true);
        expect((await a.admit(c, conc, FRESH, R, 0, GENERATE)).ok).toBe(false);
        const d = keyId();
        const day = { ...NONE, rpd: 5 };
        for (let i = 0; i < 5; i++) {
          expect((await a.admit(d, day, FRESH, R, 0, GENERATE)).ok).toBe(true);
          settle(a, d, 10);
        }
        const q = keyId();
        const quota = { ...NONE, quotaTokens: 1000 };
        expect((await a.admit(q, quota, FRESH, R, 0, GENERATE)).ok).toBe(true);
        settle(a, q, 1000);

        await redis.down();
        await redis.up(); // no persistence: it comes back empty

        // The first answer that is not "unavailable" (Redis is back) must already count everything.
        const next = (l: RedisLimiter, k: string, limits: KeyLimits) =>
          pollUntil(() => l.admit(k, limits, FRESH, R, 1000, GENERATE).catch((e) => e), (r) => !(isAppError(r) && r.status === 503), {
            timeoutMs: 10_000,
            stepMs: 20,
            what: "an answer from Redis again",
          }).then((p) => p.value as AdmitResult);
        expect(await next(a, c, conc)).toMatchObject({ ok: false, code: "concurrent_limit" });
        expect(await next(b, d, day)).toMatchObject({ ok: false, code: "rate_limit_rpd" });
        expect(await next(a, q, quota)).toMatchObject({ ok: false, code: "quota_exceeded" });
        // The calls registered again are the same leases: one settled, its slot is free again (and only one).
        b.settle(c, R, { tokens: 0, cost: 0 }, true);
        await pollUntil(() => a.admit(c, conc, FRESH, R, 1000, GENERATE), (r) => r.ok, { what: "the settled call's slot" });
        expect((await a.admit(c, conc, FRESH, R, 1000, GENERATE)).ok).toBe(false);
      } finally {
        a.close();
        b.close();
        await redis.stop();
      }
    });

    test("fail-closed (the default) answers 503 while Redis is down and admits again by itself once it is back", { timeout: 30_000 }, async () => {
      const redis = await startRedisServer();
      const l = new RedisLimiter(redis.url, { leaseMs: 600 });
      try {
        await l.start();
        await redis.down();
        const err = await l.admit(keyId(), { ...NONE, rpm: 10 }, FRESH, R, 0, GENERATE).then(() => null, (e) => e);
        expect(err).toMatchObject({ status: 503, code: "service_unavailable" });
        await redis.up();
        const k = keyId();
        await pollUntil(
          () => l.admit(k, { ...NONE, rpm: 10 }, FRESH, R, 0, { concurrency: false, quota: false }).then((r) => r.ok, () => false),
          Boolean,
          { timeoutMs: 10_000, stepMs: 50, what: "admission after Redis came back" },
        );
      } finally {
        l.close();
        await redis.stop();
      }
    });
  });
}
