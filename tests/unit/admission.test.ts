import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { admit, authenticate, bearerToken, formatDuration } from "../../src/gateway/admission";
import { KeyCache } from "../../src/gateway/key-cache";
import { InProcessLimiter } from "../../src/gateway/limits/limiter";
import { openDatabase } from "../../src/store/db";
import { KeyStore, type KeyFields } from "../../src/store/keys";
import { AppError } from "../../src/errors";

const NOW = Date.parse("2026-06-01T00:00:00Z");

function setup(fields: KeyFields) {
  const db: Database = openDatabase(":memory:");
  const store = new KeyStore(db, () => NOW);
  const { secret } = store.create({ name: "k", ...fields });
  const cache = new KeyCache(store);
  const deps = { keys: cache, limiter: new InProcessLimiter(), priceOf: () => null, now: () => NOW };
  const run = (model: string | null = "m", maxTokens: number | null = null) => {
    try {
      admit(deps, authenticate(deps, `Bearer ${secret}`), { model, maxTokens, bodyBytes: 100 });
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
    test(name, () => expect(setup(fields).run(model, maxTokens)).toBe(expected));
  }

  test("missing, malformed and unknown keys", () => {
    const { deps } = setup({});
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

  test("a lease is released once however often release() is called", () => {
    const { deps, secret } = setup({ concurrency: 1 });
    const lease = admit(deps, authenticate(deps, `Bearer ${secret}`), { model: "m", maxTokens: null, bodyBytes: 0 });
    lease.release();
    lease.release();
    expect(deps.limiter.inFlight(lease.key.key.id)).toBe(0);
    const again = admit(deps, authenticate(deps, `bearer  ${secret}`), { model: "m", maxTokens: null, bodyBytes: 0 });
    expect(() => admit(deps, again.key, { model: "m", maxTokens: null, bodyBytes: 0 })).toThrow(AppError);
  });
});

describe("helpers", () => {
  test("bearer parsing", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc ")).toBe("abc");
    expect(bearerToken("Bearer a b")).toBeNull();
    expect(bearerToken("")).toBeNull();
  });
  test("durations as OpenAI writes them", () => {
    expect(formatDuration(12)).toBe("12ms");
    expect(formatDuration(1000)).toBe("1s");
    expect(formatDuration(1500)).toBe("1.5s");
    expect(formatDuration(360_000)).toBe("6m0s");
    expect(formatDuration(3_723_000)).toBe("1h2m3s");
  });
});
