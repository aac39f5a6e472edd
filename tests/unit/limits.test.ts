import { describe, expect, test } from "bun:test";
import { canTake, createBucket, msUntilFull, msUntilToken, resize, take } from "../../src/gateway/limits/rules/token-bucket";
import { costOf, quotaExhausted } from "../../src/gateway/limits/rules/quota";
import { MAX_MODEL_NAME, compileModelPermission, modelNameProblem } from "../../src/gateway/limits/rules/model-match";
import { DAY_MS, InProcessLimiter, MINUTE_MS } from "../../src/gateway/limits/limiter";

describe("token bucket", () => {
  test("starts full, empties, refills evenly over the window", async () => {
    const b = createBucket(3, 60_000, 0);
    for (let i = 0; i < 3; i++) {
      expect(canTake(b, 0)).toBe(true);
      take(b, 0);
    }
    expect(canTake(b, 0)).toBe(false);
    expect(msUntilToken(b, 0)).toBe(20_000); // 3 per minute: one token every 20 s
    expect(canTake(b, 19_999)).toBe(false);
    expect(canTake(b, 20_000)).toBe(true);
    expect(msUntilFull(b, 20_000)).toBe(40_000);
    expect(canTake(b, 10_000_000)).toBe(true);
    expect(b.tokens).toBe(3); // never above capacity
  });

  test("time going backwards changes nothing", async () => {
    const b = createBucket(2, 1000, 500);
    take(b, 500);
    take(b, 500);
    expect(canTake(b, 100)).toBe(false);
    expect(b.tokens).toBe(0);
  });

  test("resizing keeps what was used", async () => {
    const b = createBucket(10, 60_000, 0);
    for (let i = 0; i < 4; i++) take(b, 0);
    resize(b, 5, 0);
    expect(b.tokens).toBe(1);
    resize(b, 2, 0);
    expect(b.tokens).toBe(-2); // lowered below what was used: the caller waits
    expect(canTake(b, 0)).toBe(false);
  });
});

describe("quota", () => {
  test("refused only when remaining less reserved is zero or below", async () => {
    const limits = { quotaTokens: 100, balance: null };
    expect(quotaExhausted(limits, { usedTokens: 60, spent: 0, reservedTokens: 39, reservedCost: 0 })).toBeNull();
    expect(quotaExhausted(limits, { usedTokens: 60, spent: 0, reservedTokens: 40, reservedCost: 0 })).toBe("tokens");
    expect(quotaExhausted({ quotaTokens: null, balance: 1 }, { usedTokens: 9e9, spent: 0.5, reservedTokens: 0, reservedCost: 0.5 })).toBe("balance");
    expect(quotaExhausted({ quotaTokens: null, balance: null }, { usedTokens: 9e9, spent: 9e9, reservedTokens: 0, reservedCost: 0 })).toBeNull();
  });

  test("cost uses prices per million tokens", async () => {
    expect(costOf({ input: 2, output: 10 }, 500_000, 100_000)).toBeCloseTo(2);
    expect(costOf(null, 500_000, 100_000)).toBe(0);
  });
});

describe("model permission", () => {
  test("whitelist, blacklist and globs", async () => {
    const allow = compileModelPermission("allow", ["gpt-5*", "demo-mini"]);
    expect(allow("gpt-5.4")).toBe(true);
    expect(allow("demo-mini")).toBe(true);
    expect(allow("demo-large")).toBe(false);
    expect(allow("xgpt-5")).toBe(false);
    const deny = compileModelPermission("deny", ["*-large"]);
    expect(deny("demo-large")).toBe(false);
    expect(deny("demo-mini")).toBe(true);
    expect(compileModelPermission(null, [])("anything")).toBe(true);
    // Regex metacharacters in ids are literal
    expect(compileModelPermission("allow", ["a.b"])("axb")).toBe(false);
  });

  test("names and patterns compare in lower case: a deny list is not bypassed by case", () => {
    const deny = compileModelPermission("deny", ["gpt-5*", "Demo-Large"]);
    for (const m of ["GPT-5.4", "Gpt-5", "demo-large", "DEMO-LARGE"]) expect(deny(m)).toBe(false);
    expect(compileModelPermission("allow", ["GPT-4.1-mini*"])("gpt-4.1-mini-x")).toBe(true);
  });

  test("model names: ASCII letters, digits and . _ - : / @ +, at most 256, no empty, . or .. segment", () => {
    for (const ok of ["gpt-5.4", "ft:gpt-4o:org:x", "openai/gpt-oss-120b", "claude@2024+1", "a".repeat(MAX_MODEL_NAME), "v1.5..2"]) {
      expect(modelNameProblem(ok)).toBeNull();
    }
    for (const bad of ["", "a".repeat(MAX_MODEL_NAME + 1), " gpt", "gpt\t", "gpt-5.\u043e", "\uff47pt", "a/../b", "../b", "a/..", "a/./b", "a//b", "/a", "a/", "a b", "a\u0000", "a%2e"]) {
      expect(modelNameProblem(bad)).not.toBeNull();
    }
  });
});

describe("in-process limiter: a refusal consumes nothing", () => {
  const limits = { rpm: 2, rpd: 3, concurrency: 1, quotaTokens: null, balance: null };
  const used = { tokens: 0, spent: 0, since: null };
  const r = { tokens: 10, cost: 0 };
  const opts = { concurrency: true, quota: true };

  test("concurrency refusal does not use RPM or RPD", async () => {
    const l = new InProcessLimiter();
    const first = await l.admit("k", limits, used, r, 0, opts);
    expect(first.ok).toBe(true);
    const second = await l.admit("k", limits, used, r, 0, opts);
    expect(second).toMatchObject({ ok: false, code: "concurrent_limit" });
    expect(second.budget?.remaining).toBe(1); // RPM still has one left
    l.settle("k", r, { tokens: 0, cost: 0 }, true);
    expect((await l.admit("k", limits, used, r, 0, opts)).ok).toBe(true);
  });

  test("RPD refusal does not use RPM", async () => {
    const l = new InProcessLimiter();
    const lim = { ...limits, concurrency: null, rpm: 10, rpd: 1 };
    expect((await l.admit("k", lim, used, r, 0, opts)).ok).toBe(true);
    const refused = await l.admit("k", lim, used, r, 0, opts);
    expect(refused).toMatchObject({ ok: false, code: "rate_limit_rpd" });
    expect(refused.budget?.remaining).toBe(9);
  });

  test("RPM refusal with the wait until a token is back", async () => {
    const l = new InProcessLimiter();
    const lim = { ...limits, concurrency: null, rpd: null };
    await l.admit("k", lim, used, r, 0, opts);
    await l.admit("k", lim, used, r, 0, opts);
    const refused = await l.admit("k", lim, used, r, 1000, opts);
    expect(refused).toMatchObject({ ok: false, code: "rate_limit_rpm" });
    if (!refused.ok) expect(refused.retryAfterMs).toBe(MINUTE_MS / 2 - 1000);
  });

  test("quota reservations are held until settlement", async () => {
    const l = new InProcessLimiter();
    const lim = { rpm: null, rpd: null, concurrency: null, quotaTokens: 25, balance: null };
    expect((await l.admit("k", lim, used, r, 0, opts)).ok).toBe(true);
    expect((await l.admit("k", lim, used, r, 0, opts)).ok).toBe(true);
    expect((await l.admit("k", lim, used, r, 0, opts)).ok).toBe(true); // 25 - 20 > 0
    expect((await l.admit("k", lim, used, r, 0, opts))).toMatchObject({ ok: false, code: "quota_exceeded" });
    l.settle("k", r, { tokens: 0, cost: 0 }, false);
    expect((await l.admit("k", lim, used, r, 0, opts)).ok).toBe(true);
    expect(l.inFlight("k")).toBe(3);
  });
});

describe("a stored limit of 0 (refused at input; an older database may hold one)", () => {
  const none = { rpm: null, rpd: null, concurrency: null, quotaTokens: null, balance: null };
  const used = { tokens: 0, spent: 0, since: null };
  const r = { tokens: 10, cost: 0 };
  const opts = { concurrency: true, quota: true };
  const finite = (n: number) => expect(Number.isFinite(n)).toBe(true);

  test("an empty bucket reports one window, never NaN or Infinity", async () => {
    const b = createBucket(0, MINUTE_MS, 0);
    expect(canTake(b, 1000)).toBe(false);
    expect(msUntilToken(b, 1000)).toBe(MINUTE_MS);
    expect(msUntilFull(b, 1000)).toBe(MINUTE_MS);
    const lowered = createBucket(5, MINUTE_MS, 0);
    take(lowered, 0);
    resize(lowered, 0, 0);
    finite(msUntilToken(lowered, 10));
    finite(msUntilFull(lowered, 10));
  });

  for (const [field, code, windowMs] of [
    ["rpm", "rate_limit_rpm", MINUTE_MS],
    ["rpd", "rate_limit_rpd", DAY_MS],
    ["concurrency", "concurrent_limit", null],
  ] as const) {
    test(`${field} 0 blocks: not retryable, finite wait and budget`, async () => {
      const l = new InProcessLimiter();
      const refused = await l.admit("k", { ...none, [field]: 0 }, used, r, 5, opts);
      expect(refused).toMatchObject({ ok: false, code, retryable: false });
      if (refused.ok) return;
      finite(refused.retryAfterMs);
      expect(refused.retryAfterMs).toBeGreaterThan(60_000);
      if (windowMs === null) expect(refused.budget).toBeNull();
      else expect(refused.budget).toEqual({ limit: 0, remaining: 0, resetMs: windowMs });
      expect(l.inFlight("k")).toBe(0);
    });
  }

  test("a limit lowered to 0 blocks; raised again, it admits", async () => {
    const l = new InProcessLimiter();
    expect((await l.admit("k", { ...none, rpm: 2 }, used, r, 0, opts)).ok).toBe(true);
    l.settle("k", r, { tokens: 0, cost: 0 }, false);
    const refused = await l.admit("k", { ...none, rpm: 0 }, used, r, 10, opts);
    expect(refused).toMatchObject({ ok: false, code: "rate_limit_rpm", retryable: false });
    if (!refused.ok) for (const n of Object.values(refused.budget!)) finite(n);
    expect((await l.admit("k", { ...none, rpm: 2 }, used, r, 20, opts)).ok).toBe(true);
  });

  test("an ordinary refusal stays retryable", async () => {
    const l = new InProcessLimiter();
    await l.admit("k", { ...none, rpm: 1 }, used, r, 0, opts);
    expect((await l.admit("k", { ...none, rpm: 1 }, used, r, 0, opts))).toMatchObject({ ok: false, retryable: true });
  });
});

describe("in-process limiter: the quota used is its own", () => {
  const lim = { rpm: null, rpd: null, concurrency: null, quotaTokens: 400, balance: null };
  const opts = { concurrency: true, quota: true };
  const r = { tokens: 100, cost: 0 };

  test("settlement turns the reservation into the real use, and an older record does not undo it", async () => {
    const l = new InProcessLimiter();
    const recorded = { tokens: 0, spent: 0, since: null };
    expect((await l.admit("k", lim, recorded, r, 0, opts)).ok).toBe(true);
    l.settle("k", r, { tokens: 450, cost: 0 }, false);
    // The same (older) record again, as a key-cache reload before the ledger row is written would bring it.
    expect((await l.admit("k", lim, recorded, r, 0, opts))).toMatchObject({ ok: false, code: "quota_exceeded" });
  });

  test("a new quota period (a usage reset) replaces what it counted", async () => {
    const l = new InProcessLimiter();
    expect((await l.admit("k", lim, { tokens: 0, spent: 0, since: null }, r, 0, opts)).ok).toBe(true);
    l.settle("k", r, { tokens: 450, cost: 0 }, false);
    expect((await l.admit("k", lim, { tokens: 0, spent: 0, since: 1000 }, r, 0, opts)).ok).toBe(true);
  });

  test("forget drops idle keys that no longer exist, keeps those with requests in flight", async () => {
    const l = new InProcessLimiter();
    const conc = { ...lim, concurrency: 1 };
    expect((await l.admit("gone", conc, { tokens: 0, spent: 0, since: null }, r, 0, opts)).ok).toBe(true);
    expect((await l.admit("busy", conc, { tokens: 0, spent: 0, since: null }, r, 0, opts)).ok).toBe(true);
    l.settle("gone", r, { tokens: 450, cost: 0 }, true);
    l.forget(new Set());
    expect(l.inFlight("busy")).toBe(1);
    // Forgotten: a key with the same id starts from its record again.
    expect((await l.admit("gone", conc, { tokens: 0, spent: 0, since: null }, r, 0, opts)).ok).toBe(true);
    expect((await l.admit("busy", conc, { tokens: 0, spent: 0, since: null }, r, 0, opts))).toMatchObject({ ok: false, code: "concurrent_limit" });
  });
});

