/**
 * What every LimiterStore must do, against the interface only: the spec's check order, nothing consumed on a
 * refusal, exact limits under concurrent admissions, settlement moving a reservation into the quota used, and
 * forgetting keys that no longer exist. A shared backend (next issue) runs the same suite.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { KeyLimits, LimiterStore, RecordedUsage } from "../../src/gateway/limits/limiter";

export interface LimiterFixture {
  limiter: LimiterStore;
  close(): Promise<void> | void;
}

const NONE: KeyLimits = { rpm: null, rpd: null, concurrency: null, quotaTokens: null, balance: null };
const FRESH: RecordedUsage = { tokens: 0, spent: 0, since: null };
const GENERATE = { concurrency: true, quota: true };
const R = { tokens: 100, cost: 0.5 };
const NOTHING = { tokens: 0, cost: 0 };

export function limiterConformance(backend: string, make: () => Promise<LimiterFixture>): void {
  describe(`LimiterStore conformance: ${backend}`, () => {
    let fx: LimiterFixture | null = null;
    const open = async () => (fx = await make());
    let n = 0;
    /** A key id of its own per test, so a shared backend's leftovers never meet a later test. */
    const keyId = () => `conformance-${Date.now()}-${n++}`;
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("RPM admits exactly its limit under concurrent admissions, and says when to retry", async () => {
      const { limiter } = await open();
      const k = keyId();
      const results = await Promise.all(Array.from({ length: 50 }, () => limiter.admit(k, { ...NONE, rpm: 10 }, FRESH, NOTHING, 0, { concurrency: false, quota: false })));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      const refused = results.find((r) => !r.ok)!;
      expect(refused).toMatchObject({ ok: false, code: "rate_limit_rpm", retryable: true });
      if (!refused.ok) expect(refused.retryAfterMs).toBeGreaterThan(0);
    });

    test("concurrency never exceeds its limit; a settled slot is free again", async () => {
      const { limiter } = await open();
      const k = keyId();
      const limits = { ...NONE, concurrency: 3 };
      const results = await Promise.all(Array.from({ length: 20 }, () => limiter.admit(k, limits, FRESH, R, 0, GENERATE)));
      expect(results.filter((r) => r.ok)).toHaveLength(3);
      expect(limiter.inFlight(k)).toBe(3);
      limiter.settle(k, R, NOTHING, true);
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(false);
    });

    test("a concurrency limit changed while requests run counts them: lowered, raised, or set where there was none", async () => {
      const { limiter } = await open();
      const k = keyId();
      const admitted = async (concurrency: number | null, n: number) =>
        (await Promise.all(Array.from({ length: n }, () => limiter.admit(k, { ...NONE, concurrency }, FRESH, R, 0, GENERATE)))).filter((r) => r.ok).length;
      expect(await admitted(4, 4)).toBe(4);
      // Lowered to 2 with 4 running: nothing more until fewer than 2 run.
      expect(await admitted(2, 3)).toBe(0);
      limiter.settle(k, R, NOTHING, true);
      limiter.settle(k, R, NOTHING, true);
      expect(await admitted(2, 3)).toBe(0);
      limiter.settle(k, R, NOTHING, true);
      expect(await admitted(2, 3)).toBe(1);
      // Raised to 5 with 2 running: 3 more.
      expect(await admitted(5, 6)).toBe(3);
      expect(limiter.inFlight(k)).toBe(5);
      for (let i = 0; i < 5; i++) limiter.settle(k, R, NOTHING, true);

      // Set where there was none: requests admitted without a limit count against the new one.
      const u = keyId();
      const free = await Promise.all(Array.from({ length: 3 }, () => limiter.admit(u, NONE, FRESH, R, 0, GENERATE)));
      expect(free.every((r) => r.ok)).toBe(true);
      expect((await limiter.admit(u, { ...NONE, concurrency: 2 }, FRESH, R, 0, GENERATE)).ok).toBe(false);
      limiter.settle(u, R, NOTHING, free[0]!.ok && free[0]!.slot);
      limiter.settle(u, R, NOTHING, free[1]!.ok && free[1]!.slot);
      expect((await limiter.admit(u, { ...NONE, concurrency: 2 }, FRESH, R, 0, GENERATE)).ok).toBe(true);
    });

    test("checks in the spec's order, and a refusal consumes nothing", async () => {
      const { limiter } = await open();
      const k = keyId();
      const limits = { ...NONE, rpm: 5, rpd: 1, concurrency: 1, quotaTokens: 1000 };
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      // RPD is used up and the slot is held: RPD is refused first, and RPM keeps its tokens.
      const refused = await limiter.admit(k, limits, FRESH, R, 0, GENERATE);
      expect(refused).toMatchObject({ ok: false, code: "rate_limit_rpd" });
      expect(refused.budget?.remaining).toBe(4);
      // Quota comes before every rate (a key met for the first time with its quota used up).
      const spent = keyId();
      expect(await limiter.admit(spent, { ...limits, rpm: 0 }, { tokens: 1000, spent: 0, since: null }, R, 0, GENERATE)).toMatchObject({ ok: false, code: "quota_exceeded" });
    });

    test("a reservation counts against the quota until settled; settlement moves the real use into the quota used", async () => {
      const { limiter } = await open();
      const k = keyId();
      const limits = { ...NONE, quotaTokens: 250 };
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      expect((await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).ok).toBe(true); // 250 - 200 > 0
      expect(await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).toMatchObject({ ok: false, code: "quota_exceeded" });
      // Two end having used less than they reserved, one more than: 30 + 30 + 200 = 260 > 250.
      limiter.settle(k, R, { tokens: 30, cost: 0 }, false);
      limiter.settle(k, R, { tokens: 30, cost: 0 }, false);
      limiter.settle(k, R, { tokens: 200, cost: 0 }, false);
      // The same older record as before does not undo what was settled.
      expect(await limiter.admit(k, limits, FRESH, R, 0, GENERATE)).toMatchObject({ ok: false, code: "quota_exceeded" });
      // A new quota period (a reset) starts from its record.
      expect((await limiter.admit(k, limits, { tokens: 0, spent: 0, since: 1 }, R, 0, GENERATE)).ok).toBe(true);
    });

    test("a balance is a quota in money", async () => {
      const { limiter } = await open();
      const k = keyId();
      const limits = { ...NONE, balance: 1 };
      const dear = { tokens: 100, cost: 1 };
      expect((await limiter.admit(k, limits, FRESH, dear, 0, GENERATE)).ok).toBe(true);
      expect(await limiter.admit(k, limits, FRESH, dear, 0, GENERATE)).toMatchObject({ ok: false, code: "quota_exceeded" });
      limiter.settle(k, dear, { tokens: 10, cost: 0.1 }, false);
      expect((await limiter.admit(k, limits, FRESH, dear, 0, GENERATE)).ok).toBe(true);
    });

    test("listing models checks rates but holds no slot and reserves nothing", async () => {
      const { limiter } = await open();
      const k = keyId();
      const limits = { ...NONE, concurrency: 1, quotaTokens: 1, rpm: 2 };
      const list = { concurrency: false, quota: false };
      expect((await limiter.admit(k, limits, FRESH, NOTHING, 0, list)).ok).toBe(true);
      expect(limiter.inFlight(k)).toBe(0);
      expect((await limiter.admit(k, limits, FRESH, NOTHING, 0, list)).ok).toBe(true);
      expect(await limiter.admit(k, limits, FRESH, NOTHING, 0, list)).toMatchObject({ ok: false, code: "rate_limit_rpm" });
    });

    test("forget drops keys that no longer exist unless requests are in flight; totals follow", async () => {
      const { limiter } = await open();
      const [gone, busy] = [keyId(), keyId()];
      const limits = { ...NONE, concurrency: 1, quotaTokens: 150 };
      expect((await limiter.admit(gone, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      expect((await limiter.admit(busy, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
      const before = limiter.totalInFlight();
      limiter.settle(gone, R, { tokens: 140, cost: 0 }, true);
      expect(limiter.totalInFlight()).toBe(before - 1);
      limiter.forget(new Set());
      expect(limiter.inFlight(busy)).toBe(1);
      expect((await limiter.admit(gone, limits, FRESH, R, 0, GENERATE)).ok).toBe(true);
    });
  });
}
