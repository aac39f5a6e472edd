/**
 * The PoolStateStore contract, against the interface only: deadlines that only extend (per account and per
 * model), disabling and enabling (an operator's disabling stays manual), one probe claimant at a time whose
 * claim expires, a rolling window of outcomes per second, and in-flight counts that never go below zero. The
 * store's clock is the test's (`clock.now`), so deadlines are checked without waiting; only the probe claim's
 * expiry may need real time (a backend may keep it as a TTL), and is waited for by polling.
 */
import { describe, expect, test } from "bun:test";
import type { PoolStateStore } from "../../src/gateway/upstream/pool-port";
import { pollUntil } from "../support/poll";

export interface TestClock {
  now: () => number;
  advance(ms: number): void;
}

export function testClock(start = Date.now()): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export interface OpenedPoolState {
  store: PoolStateStore;
  close(): void;
}

export function poolStateConformance(backend: string, open: (clock: TestClock) => Promise<OpenedPoolState>): void {
  // Names unique per run: a shared Redis keeps what earlier runs wrote.
  const account = () => `acct-${crypto.randomUUID()}`;

  async function withStore(run: (store: PoolStateStore, clock: TestClock) => Promise<void>): Promise<void> {
    const clock = testClock();
    const opened = await open(clock);
    try {
      await run(opened.store, clock);
    } finally {
      opened.close();
    }
  }

  async function health(store: PoolStateStore, name: string) {
    return (await store.read([name])).get(name)!;
  }

  describe(`PoolStateStore conformance: ${backend}`, () => {
    test("an account never met reads healthy", () =>
      withStore(async (store) => {
        const names = [account(), account()];
        const all = await store.read(names);
        expect([...all.keys()]).toEqual(names);
        for (const h of all.values()) expect(h).toEqual({ coolingUntil: null, modelCoolingUntil: {}, disabled: null, probing: false, reason: null, inFlight: 0 });
      }));

    test("a cooldown only extends: an earlier deadline keeps the later one, a later one replaces it, and it ends when passed", () =>
      withStore(async (store, clock) => {
        const a = account();
        const t = clock.now();
        await store.cool(a, null, t + 10_000, "rate_limited");
        await store.cool(a, null, t + 5_000, "rate_limited");
        expect(await health(store, a)).toMatchObject({ coolingUntil: t + 10_000, reason: "rate_limited", disabled: null });
        await store.cool(a, null, t + 20_000, "server_error");
        expect(await health(store, a)).toMatchObject({ coolingUntil: t + 20_000, reason: "server_error" });
        clock.advance(19_999);
        expect((await health(store, a)).coolingUntil).toBe(t + 20_000);
        clock.advance(1);
        expect((await health(store, a)).coolingUntil).toBeNull();
      }));

    test("a model's cooldown cools that model only, extends only, and ends on its own", () =>
      withStore(async (store, clock) => {
        const a = account();
        const t = clock.now();
        await store.cool(a, "gpt-a", t + 30_000, "rate_limited");
        await store.cool(a, "gpt-a", t + 1_000, "rate_limited");
        await store.cool(a, "gpt-b", t + 10_000, "rate_limited");
        expect(await health(store, a)).toMatchObject({ coolingUntil: null, modelCoolingUntil: { "gpt-a": t + 30_000, "gpt-b": t + 10_000 } });
        clock.advance(10_000);
        expect((await health(store, a)).modelCoolingUntil).toEqual({ "gpt-a": t + 30_000 });
        clock.advance(20_000);
        expect((await health(store, a)).modelCoolingUntil).toEqual({});
      }));

    test("disable takes an account out until enabled; enable clears cooldowns, the probe and the window", () =>
      withStore(async (store, clock) => {
        const a = account();
        const t = clock.now();
        await store.cool(a, null, t + 60_000, "rate_limited");
        await store.cool(a, "gpt-a", t + 60_000, "rate_limited");
        await store.disable(a, "auth", false);
        // Disabling does not pass with time.
        clock.advance(86_400_000);
        expect(await health(store, a)).toMatchObject({ disabled: { reason: "auth", manual: false }, reason: "auth" });
        expect(await store.claimProbe(a, 60_000)).toBe(true);
        await store.recordOutcome(a, true, clock.now(), 60_000);
        await store.enable(a);
        expect(await health(store, a)).toEqual({ coolingUntil: null, modelCoolingUntil: {}, disabled: null, probing: false, reason: null, inFlight: 0 });
        // The window started afresh, and the probe can be claimed again.
        expect(await store.recordOutcome(a, false, clock.now(), 60_000)).toEqual({ failures: 0, requests: 1 });
        expect(await store.claimProbe(a, 60_000)).toBe(true);
      }));

    test("an operator's disabling stays manual when a failure disables the account again; enable ends it", () =>
      withStore(async (store) => {
        const a = account();
        await store.disable(a, "disabled by an operator", true);
        await store.disable(a, "auth", false);
        expect((await health(store, a)).disabled).toEqual({ reason: "auth", manual: true });
        await store.enable(a);
        await store.disable(a, "quota", false);
        expect((await health(store, a)).disabled).toEqual({ reason: "quota", manual: false });
      }));

    test("exactly one of 20 concurrent probe claims wins; the claim shows as probing and expires after its TTL", () =>
      withStore(async (store, clock) => {
        const a = account();
        const other = account();
        const claims = await Promise.all(Array.from({ length: 20 }, () => store.claimProbe(a, 300)));
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect((await health(store, a)).probing).toBe(true);
        // Another account's probe is its own.
        expect(await store.claimProbe(other, 300)).toBe(true);
        clock.advance(301);
        // The claim is a deadline: passed (on the store's clock, or in real time for a TTL), a new claim wins.
        await pollUntil(() => store.claimProbe(a, 60_000), Boolean, { what: "the expired probe claim to be free", timeoutMs: 10_000 });
        const again = await Promise.all(Array.from({ length: 20 }, () => store.claimProbe(a, 60_000)));
        expect(again.filter(Boolean)).toHaveLength(0);
      }));

    test("the rolling window counts requests and failures of the last windowMs, and forgets older seconds", () =>
      withStore(async (store) => {
        const a = account();
        const t = Date.parse("2026-03-01T12:00:00.500Z");
        const w = 10_000;
        expect(await store.recordOutcome(a, true, t, w)).toEqual({ failures: 1, requests: 1 });
        expect(await store.recordOutcome(a, true, t + 100, w)).toEqual({ failures: 2, requests: 2 });
        expect(await store.recordOutcome(a, false, t + 200, w)).toEqual({ failures: 2, requests: 3 });
        expect(await store.recordOutcome(a, false, t + 5_000, w)).toEqual({ failures: 2, requests: 4 });
        // Past the window the first second's outcomes are gone; the one of t+5s stays.
        expect(await store.recordOutcome(a, false, t + 11_000, w)).toEqual({ failures: 0, requests: 2 });
        expect(await store.recordOutcome(a, true, t + 30_000, w)).toEqual({ failures: 1, requests: 1 });
        // Accounts have windows of their own.
        expect(await store.recordOutcome(account(), false, t + 30_000, w)).toEqual({ failures: 0, requests: 1 });
      }));

    test("in-flight counts go up and down, never below zero, and show in read", () =>
      withStore(async (store) => {
        const a = account();
        expect(await store.adjustInFlight(a, -1)).toBe(0);
        expect(await store.adjustInFlight(a, 1)).toBe(1);
        expect(await store.adjustInFlight(a, 1)).toBe(2);
        expect((await health(store, a)).inFlight).toBe(2);
        const downs = await Promise.all([store.adjustInFlight(a, -1), store.adjustInFlight(a, -1), store.adjustInFlight(a, -1)]);
        expect(downs.at(-1)).toBe(0);
        expect((await health(store, a)).inFlight).toBe(0);
        expect(await store.adjustInFlight(a, 1)).toBe(1);
      }));
  });
}
