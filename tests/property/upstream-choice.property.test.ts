/** The pool's pure rules: the choice of an account, the reset headers' deadline, failure kinds and what they do. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { AccountHealth, UpstreamAccount } from "../../src/gateway/upstream/pool-port";
import { allOutReply, anyUsable, availabilityOf, chooseAccount, rendezvous } from "../../src/gateway/upstream/rules/choose-account";
import { classifyFailure, consequenceOf, durationMs, resetDeadline, windowTripped } from "../../src/gateway/upstream/rules/cooldown";

const NOW = 1_800_000_000_000;

function account(name: string, over: Partial<UpstreamAccount> = {}): UpstreamAccount {
  return { name, baseUrl: `http://${name}/v1`, apiKey: "k", models: ["*"], modelMap: {}, priority: 1, weight: 1, maxConcurrency: null, ...over };
}
function health(over: Partial<AccountHealth> = {}): AccountHealth {
  return { coolingUntil: null, modelCoolingUntil: {}, disabled: null, probing: false, reason: null, inFlight: 0, ...over };
}

const arbHealth = fc.record({
  coolingUntil: fc.option(fc.integer({ min: NOW - 5000, max: NOW + 5000 }), { nil: null }),
  modelCoolingUntil: fc.constantFrom<Record<string, number>>({}, { m: NOW + 2000 }, { other: NOW + 2000 }),
  disabled: fc.option(fc.record({ reason: fc.constant("auth"), manual: fc.boolean() }), { nil: null }),
  probing: fc.boolean(),
  reason: fc.constantFrom("rate_limited", "server_error", "auth", null),
  inFlight: fc.integer({ min: 0, max: 5 }),
});
const arbPool = fc.array(
  fc.record({
    priority: fc.integer({ min: 0, max: 3 }),
    weight: fc.integer({ min: 0, max: 4 }),
    maxConcurrency: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
    models: fc.constantFrom(["*"], ["m"], ["other"]),
    health: arbHealth,
  }),
  { minLength: 1, maxLength: 6 },
);

describe("choice of an account", () => {
  test("the pick serves the model, is usable or due for its probe, was not tried, and is in the best usable tier", () => {
    fc.assert(
      fc.property(arbPool, fc.double({ min: 0, max: 0.999999, noNaN: true }), fc.option(fc.string({ maxLength: 8 }), { nil: null }), fc.array(fc.nat(5)), (specs, random, affinity, triedIdx) => {
        const accounts = specs.map((s, i) => account(`a${i}`, { priority: s.priority, weight: s.weight, maxConcurrency: s.maxConcurrency, models: s.models }));
        const healthMap = new Map(specs.map((s, i) => [`a${i}`, health(s.health)]));
        const tried = new Set(triedIdx.map((i) => `a${i}`));
        const choice = chooseAccount({ accounts, health: healthMap, model: "m", nowMs: NOW, tried, affinity, random });
        const avail = (a: UpstreamAccount) => availabilityOf(a, healthMap.get(a.name), "m", NOW);
        const candidates = accounts.filter((a) => !tried.has(a.name) && (a.models.includes("*") || a.models.includes("m")));
        const usable = candidates.filter((a) => avail(a).state !== "out");
        if (choice.account === null) {
          expect(usable).toEqual([]);
          expect(choice.out.map((o) => o.name).sort()).toEqual(candidates.map((a) => a.name).sort());
          return;
        }
        const picked = choice.account;
        expect(usable).toContain(picked);
        // Never a cooling, disabled or full account; a probe only for one that is due.
        expect(avail(picked).state).toBe(choice.probe ? "probe" : "usable");
        expect(picked.priority).toBe(Math.min(...usable.map((a) => a.priority)));
        // A drained account only when nothing with a weight is usable in its tier.
        if (picked.weight === 0 && !choice.probe) expect(usable.filter((a) => a.priority === picked.priority && a.weight > 0 && avail(a).state === "usable")).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  test("anyUsable says whether a choice would find an account", () => {
    fc.assert(
      fc.property(arbPool, fc.array(fc.nat(5)), (specs, triedIdx) => {
        const accounts = specs.map((s, i) => account(`a${i}`, { priority: s.priority, weight: s.weight, maxConcurrency: s.maxConcurrency, models: s.models }));
        const healthMap = new Map(specs.map((s, i) => [`a${i}`, health(s.health)]));
        const tried = new Set(triedIdx.map((i) => `a${i}`));
        const input = { accounts, health: healthMap, model: "m", nowMs: NOW, tried };
        expect(anyUsable(input)).toBe(chooseAccount({ ...input, random: 0 }).account !== null);
      }),
      { numRuns: 2000 },
    );
  });

  test("a pinned account is taken when usable, whatever its tier, and never when it is out", () => {
    const a = account("a", { priority: 1 });
    const b = account("b", { priority: 2 });
    const base = { accounts: [a, b], model: "m", nowMs: NOW, tried: new Set<string>(), random: 0.5, pinned: "b" };
    expect(chooseAccount({ ...base, health: new Map() }).account).toBe(b);
    const cooling = new Map([["b", health({ coolingUntil: NOW + 1000, reason: "rate_limited" })]]);
    expect(chooseAccount({ ...base, health: cooling }).account).toBe(a);
  });

  test("within a tier, picks follow the weights; a busier account gets less", () => {
    const accounts = [account("a", { weight: 3 }), account("b", { weight: 1 })];
    const counts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 1000; i++) {
      const c = chooseAccount({ accounts, health: new Map(), model: "m", nowMs: NOW, tried: new Set(), random: i / 1000 });
      counts[c.account!.name]!++;
    }
    expect(counts.a).toBe(750);
    const busy = new Map([["a", health({ inFlight: 5 })]]);
    const share = [...Array(1000).keys()].filter((i) => chooseAccount({ accounts, health: busy, model: "m", nowMs: NOW, tried: new Set(), random: i / 1000 }).account!.name === "a").length;
    expect(Math.abs(share - 333)).toBeLessThanOrEqual(1); // 0.5 against 1: a third
  });

  test("the same affinity key keeps its account; keys spread by weight; a key moves only when its account leaves", () => {
    const accounts = [account("a", { weight: 1 }), account("b", { weight: 1 }), account("c", { weight: 2 })];
    const counts = { a: 0, b: 0, c: 0 } as Record<string, number>;
    for (let i = 0; i < 4000; i++) counts[rendezvous(accounts, `key-${i}`).name]!++;
    expect(counts.c! / 4000).toBeGreaterThan(0.45);
    expect(counts.c! / 4000).toBeLessThan(0.55);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), (key) => {
        const first = rendezvous(accounts, key);
        expect(rendezvous(accounts, key)).toBe(first);
        const others = accounts.filter((a) => a !== first);
        const without = rendezvous(accounts.filter((a) => a.name !== "a"), key);
        if (first.name !== "a") expect(without).toBe(first);
        else expect(others).toContain(without);
      }),
    );
  });

  test("all out: 429 when every account is rate limited, else 503; Retry-After the soonest return", () => {
    expect(allOutReply([{ name: "a", untilMs: NOW + 7200, why: "rate_limited" }, { name: "b", untilMs: NOW + 30_000, why: "rate_limited" }], NOW)).toEqual({ status: 429, retryAfterSeconds: 8 });
    expect(allOutReply([{ name: "a", untilMs: NOW + 7200, why: "rate_limited" }, { name: "b", untilMs: NOW + 3000, why: "server_error" }], NOW)).toEqual({ status: 503, retryAfterSeconds: 3 });
    expect(allOutReply([{ name: "a", untilMs: NOW + 10, why: "auth" }], NOW).retryAfterSeconds).toBe(1);
  });
});

describe("reset headers", () => {
  const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;

  test("each form is read; the latest deadline wins", () => {
    expect(resetDeadline(headers({ "retry-after": "7" }), NOW)).toBe(NOW + 7000);
    expect(resetDeadline(headers({ "retry-after": new Date(NOW + 20_000).toUTCString() }), NOW)).toBe(NOW + 20_000);
    expect(resetDeadline(headers({ "retry-after-ms": "250" }), NOW)).toBe(NOW + 250);
    expect(resetDeadline(headers({ "x-ratelimit-reset-requests": "6m0s" }), NOW)).toBe(NOW + 360_000);
    expect(resetDeadline(headers({ "x-ratelimit-reset-tokens": "250ms", "retry-after": "1" }), NOW)).toBe(NOW + 1000);
    expect(resetDeadline(headers({ "x-ratelimit-reset-tokens": "1m30.5s", "retry-after-ms": "10" }), NOW)).toBe(NOW + 90_500);
    expect(resetDeadline(headers({}), NOW)).toBeNull();
    expect(resetDeadline(headers({ "retry-after": "soon", "x-ratelimit-reset-requests": "tomorrow" }), NOW)).toBeNull();
    expect(resetDeadline(headers({ "retry-after": "999999999" }), NOW)).toBe(NOW + 86_400_000);
  });

  test("durations: any Go-style duration reads as the sum of its parts", () => {
    fc.assert(
      fc.property(fc.nat(48), fc.nat(59), fc.nat(59), fc.nat(999), (h, m, s, ms) => {
        expect(durationMs(`${h}h${m}m${s}s${ms}ms`)).toBe(h * 3_600_000 + m * 60_000 + s * 1000 + ms);
        expect(resetDeadline((n) => (n === "x-ratelimit-reset-requests" ? `${m}m${s}s` : null), NOW)).toBe(NOW + Math.min(m * 60_000 + s * 1000, 86_400_000));
      }),
    );
  });
});

describe("failures", () => {
  test("kinds: 400 is the caller's, never the account's", () => {
    expect(classifyFailure({ status: 400, code: null })).toBeNull();
    expect(classifyFailure({ status: 404, code: null })).toBeNull();
    expect(classifyFailure({ status: 429, code: "rate_limit_exceeded" })).toBe("rate_limited");
    expect(classifyFailure({ status: 429, code: "insufficient_quota" })).toBe("quota");
    expect(classifyFailure({ status: 401, code: null })).toBe("auth");
    expect(classifyFailure({ status: 403, code: null })).toBe("auth");
    expect(classifyFailure({ status: 402, code: null })).toBe("quota");
    expect(classifyFailure({ status: 408, code: null })).toBe("timeout");
    expect(classifyFailure({ status: 502, code: null })).toBe("server_error");
    expect(classifyFailure({ status: null, transport: "timeout", code: null })).toBe("timeout");
    expect(classifyFailure({ status: null, transport: "connect", code: null })).toBe("connect");
    expect(classifyFailure({ status: null, inBand: "error", code: "server_error" })).toBe("in_band_error");
    expect(classifyFailure({ status: null, inBand: "error", code: "insufficient_quota" })).toBe("quota");
    expect(classifyFailure({ status: null, inBand: "cut", code: null })).toBe("cut");
  });

  test("a rate limit cools until the upstream's deadline, at least a second; auth and quota wait for a probe; nothing is for good", () => {
    expect(consequenceOf("rate_limited", null, NOW)).toEqual({ action: "cool", untilMs: NOW + 1000 });
    expect(consequenceOf("rate_limited", NOW + 107_000, NOW)).toEqual({ action: "cool", untilMs: NOW + 107_000 });
    expect(consequenceOf("auth", null, NOW)).toEqual({ action: "disable", probeAtMs: NOW + 60_000 });
    expect(consequenceOf("server_error", null, NOW)).toEqual({ action: "count" });
    expect(windowTripped(2, 4)).toBe(false);
    expect(windowTripped(3, 5)).toBe(true);
    expect(windowTripped(2, 5)).toBe(false);
  });

  test("a disabled account comes back through one probe once its wait is over", () => {
    const a = account("a");
    const out = health({ disabled: { reason: "auth", manual: false }, coolingUntil: NOW + 5000, reason: "auth" });
    expect(availabilityOf(a, out, "m", NOW).state).toBe("out");
    const due = health({ disabled: { reason: "auth", manual: false }, coolingUntil: null, reason: "auth" });
    expect(availabilityOf(a, due, "m", NOW).state).toBe("probe");
    expect(availabilityOf(a, { ...due, probing: true }, "m", NOW).state).toBe("out");
    expect(availabilityOf(a, health({ disabled: { reason: "operator", manual: true } }), "m", NOW)).toEqual({ state: "out", untilMs: null, why: "manual" });
  });
});
