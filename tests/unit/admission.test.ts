import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { admit, authenticate, formatDuration, rateLimitHeaders } from "../../src/gateway/limits/admission";
import { bearerToken } from "../../src/http/bearer";
import { KeyCache } from "../../src/gateway/keys/key-cache";
import { InProcessLimiter } from "../../src/gateway/limits/limiter";
import { openDatabase } from "../../src/store/sqlite/db";
import { SqliteKeyRepository } from "../../src/store/sqlite/keys";
import { SqliteChangeFeed } from "../../src/store/sqlite/change-feed";
import type { KeyFields } from "../../src/gateway/keys/key-repository";
import { AppError } from "../../src/errors";

const NOW = Date.parse("2026-06-01T00:00:00Z");

/** A key cache over its own in-memory database; the feed reads its counter on every call (no polling delay). */
async function loadedCache(db: Database, store: SqliteKeyRepository): Promise<KeyCache> {
  const cache = new KeyCache(store, new SqliteChangeFeed(db, { versionPollMs: 0 }));
  await cache.reload();
  return cache;
}

async function setup(fields: KeyFields) {
  const db: Database = openDatabase(":memory:");
  const store = new SqliteKeyRepository(db, () => NOW);
  const { secret } = await store.create({ name: "k", ...fields });
  const cache = await loadedCache(db, store);
  const deps = { keys: cache, limiter: new InProcessLimiter(), priceOf: () => null, now: () => NOW };
  const run = async (model: string | null = "m", maxTokens: number | null = null) => {
    try {
      await admit(deps, authenticate(deps, `Bearer ${secret}`), { model, maxTokens, bodyBytes: 100 });
      return "ok";
    } catch (err) {
      return (err as AppError).code;
    }
  };
  return { run, deps, secret };
}

describe("admission decision table", () => {
  const hour = 3_600_000;
  const cases: Array<[string, KeyFields, string | null, number | null, string]> = [
    ["active key, no limits", {}, "m", null, "ok"],
    ["disabled", { status: "disabled" }, "m", null, "api_key_disabled"],
    ["disabled and expired: status wins", { status: "disabled", expiresAt: NOW - hour }, "m", null, "api_key_disabled"],
    ["expired", { expiresAt: NOW - hour }, "m", null, "api_key_expired"],
    ["expires exactly now", { expiresAt: NOW }, "m", null, "api_key_expired"],
    ["not yet valid", { notBefore: NOW + hour }, "m", null, "api_key_not_yet_valid"],
    ["expired and forbidden model: validity wins", { expiresAt: NOW - hour, modelMode: "allow", models: ["x"] }, "m", null, "api_key_expired"],
    ["model not whitelisted", { modelMode: "allow", models: ["x"] }, "m", null, "model_not_allowed"],
    ["model blacklisted by glob", { modelMode: "deny", models: ["m*"] }, "m", null, "model_not_allowed"],
    ["forbidden model and over max tokens: model wins", { modelMode: "allow", models: ["x"], maxTokens: 5 }, "m", 10, "model_not_allowed"],
    ["over max tokens", { maxTokens: 5 }, "m", 10, "max_tokens_exceeded"],
    ["at max tokens", { maxTokens: 5 }, "m", 5, "ok"],
    ["quota used up", { quotaTokens: 0 }, "m", null, "quota_exceeded"],
    ["quota used up and rpm 0: quota wins", { quotaTokens: 0, rpm: 0 }, "m", null, "quota_exceeded"],
    ["rpm 0", { rpm: 0 }, "m", null, "rate_limit_rpm"],
    ["rpm 0 and rpd 0: rpm wins", { rpm: 0, rpd: 0 }, "m", null, "rate_limit_rpm"],
    ["rpd 0", { rpd: 0 }, "m", null, "rate_limit_rpd"],
    ["rpd 0 and concurrency 0: rpd wins", { rpd: 0, concurrency: 0 }, "m", null, "rate_limit_rpd"],
    ["concurrency 0", { concurrency: 0 }, "m", null, "concurrent_limit"],
    ["model list ignores quota and concurrency", { quotaTokens: 0, concurrency: 0 }, null, null, "ok"],
    ["model list still checks rpm", { rpm: 0 }, null, null, "rate_limit_rpm"],
  ];
  for (const [name, fields, model, maxTokens, expected] of cases) {
    test(name, async () => expect(await (await setup(fields)).run(model, maxTokens)).toBe(expected));
  }

  test("missing, malformed and unknown keys", async () => {
    const { deps } = await setup({});
    const code = (h: string | null) => {
      try {
        authenticate(deps, h);
        return "ok";
      } catch (err) {
        return (err as AppError).code;
      }
    };
    expect(code(null)).toBe("missing_api_key");
    expect(code("Basic abc")).toBe("missing_api_key");
    expect(code("Bearer")).toBe("missing_api_key");
    expect(code("Bearer gk-nope")).toBe("invalid_api_key");
  });

  test("a lease is settled once however often settle() is called", async () => {
    const { deps, secret } = await setup({ concurrency: 1 });
    const lease = await admit(deps, authenticate(deps, `Bearer ${secret}`), { model: "m", maxTokens: null, bodyBytes: 0 });
    lease.settle({ tokens: 0, cost: 0 });
    lease.settle({ tokens: 0, cost: 0 });
    expect(deps.limiter.inFlight(lease.key.key.id)).toBe(0);
    const again = await admit(deps, authenticate(deps, `bearer  ${secret}`), { model: "m", maxTokens: null, bodyBytes: 0 });
    await expect(admit(deps, again.key, { model: "m", maxTokens: null, bodyBytes: 0 })).rejects.toThrow(AppError);
  });
});

describe("a stored limit of 0 answers with valid headers and no retry", () => {
  const errorOf = async (fields: KeyFields, model: string | null = "m"): Promise<AppError> => {
    const { deps, secret } = await setup(fields);
    try {
      await admit(deps, authenticate(deps, `Bearer ${secret}`), { model, maxTokens: null, bodyBytes: 100 });
    } catch (err) {
      return err as AppError;
    }
    throw new Error("expected a refusal");
  };
  const cases: Array<[string, KeyFields, string, string | null]> = [
    ["rpm 0", { rpm: 0 }, "rate_limit_rpm", "1m0s"],
    ["rpd 0", { rpd: 0 }, "rate_limit_rpd", "24h0m0s"],
    ["concurrency 0", { concurrency: 0 }, "concurrent_limit", null],
    ["concurrency 0 under an rpm budget", { concurrency: 0, rpm: 10 }, "concurrent_limit", "0ms"],
    ["quota 0", { quotaTokens: 0 }, "quota_exceeded", null],
    ["balance 0", { balance: 0 }, "quota_exceeded", null],
  ];
  for (const [name, fields, code, reset] of cases) {
    test(name, async () => {
      const e = await errorOf(fields);
      expect([e.status, e.code]).toEqual([429, code]);
      for (const [header, value] of Object.entries(e.headers)) expect(`${header}: ${value}`).not.toMatch(/NaN|Infinity|undefined/);
      expect(e.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
      expect(e.headers["x-should-retry"]).toBe("false");
      expect<string | null>(e.headers["x-ratelimit-reset-requests"] ?? null).toBe(reset);
    });
  }
  test("the model list of a key with rpm 0 is refused the same way", async () => {
    const e = await errorOf({ rpm: 0 }, null);
    expect([e.code, e.headers["x-should-retry"], e.headers["x-ratelimit-reset-requests"]]).toEqual(["rate_limit_rpm", "false", "1m0s"]);
  });
  test("a budget that is not finite gives no rate-limit headers rather than wrong ones", async () => {
    expect(rateLimitHeaders({ limit: 0, remaining: 0, resetMs: Number.NaN })).toEqual({});
    expect(rateLimitHeaders({ limit: 0, remaining: 0, resetMs: Number.POSITIVE_INFINITY })).toEqual({});
    expect(rateLimitHeaders({ limit: 5, remaining: 4, resetMs: 12_000 })).toEqual({
      "x-ratelimit-limit-requests": "5",
      "x-ratelimit-remaining-requests": "4",
      "x-ratelimit-reset-requests": "12s",
    });
  });
});

describe("helpers", () => {
  test("bearer parsing", async () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc ")).toBe("abc");
    expect(bearerToken("Bearer a b")).toBeNull();
    expect(bearerToken("")).toBeNull();
  });
  test("durations as OpenAI writes them", async () => {
    expect(formatDuration(12)).toBe("12ms");
    expect(formatDuration(1000)).toBe("1s");
    expect(formatDuration(1500)).toBe("1.5s");
    expect(formatDuration(360_000)).toBe("6m0s");
    expect(formatDuration(3_723_000)).toBe("1h2m3s");
  });
});

describe("quota across key-cache reloads", () => {
  test("a reload while requests run does not lose their usage (a 400-token quota is not overspent)", async () => {
    const db: Database = openDatabase(":memory:");
    const store = new SqliteKeyRepository(db, () => NOW);
    const { secret } = await store.create({ name: "q", quotaTokens: 400 });
    await store.create({ name: "other" });
    const cache = await loadedCache(db, store);
    const deps = { keys: cache, limiter: new InProcessLimiter(), priceOf: () => null, now: () => NOW };
    const request = () => admit(deps, authenticate(deps, `Bearer ${secret}`), { model: "m", maxTokens: 50, bodyBytes: 40 });

    const running = await request();
    // Another key changes (as the admin API or the CLI would do): the cache reloads while the request runs,
    // reading totals from the database, which has not been told of the running request.
    await store.update("other", { name: "renamed" });
    expect(await cache.reloadIfChanged()).toBe(true);
    running.settle({ tokens: 450, cost: 0 });

    await expect(request()).rejects.toMatchObject({ code: "quota_exceeded" });
  });

  test("a usage reset starts a new period at once", async () => {
    const db: Database = openDatabase(":memory:");
    const store = new SqliteKeyRepository(db, () => NOW);
    const { key, secret } = await store.create({ name: "q", quotaTokens: 400 });
    let t = NOW;
    const cache = await loadedCache(db, store);
    const deps = { keys: cache, limiter: new InProcessLimiter(), priceOf: () => null, now: () => t };
    const request = () => admit(deps, authenticate(deps, `Bearer ${secret}`), { model: "m", maxTokens: 50, bodyBytes: 40 });
    (await request()).settle({ tokens: 450, cost: 0 });
    await expect(request()).rejects.toMatchObject({ code: "quota_exceeded" });
    t += 1000;
    await new SqliteKeyRepository(db, () => t).resetUsage(key.id);
    await cache.reloadIfChanged();
    expect((await request()).key.key.id).toBe(key.id);
  });
});

describe("a key the cache has not heard of yet", () => {
  test("resolve finds a key created elsewhere a moment ago, and loads it; an unknown secret stays unknown", async () => {
    const db: Database = openDatabase(":memory:");
    const store = new SqliteKeyRepository(db, () => NOW);
    const cache = await loadedCache(db, store);
    // Created through another repository on the same database, as the CLI would: no reload, no change notice.
    const { key, secret } = await new SqliteKeyRepository(db, () => NOW).create({ name: "fresh" });
    expect(cache.lookup(secret)).toBeNull();
    const [a, b] = await Promise.all([cache.resolve(secret), cache.resolve(secret)]);
    expect(a?.key.id).toBe(key.id);
    expect(b?.key.id).toBe(key.id);
    expect(cache.lookup(secret)?.key.id).toBe(key.id);
    expect(await cache.resolve(secret + "x")).toBeNull();
  });
});
