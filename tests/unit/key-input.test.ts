/** The shared key input rules: what the admin API and `gantry keys` refuse, and in which words. */
import { describe, expect, test } from "bun:test";
import { checkKeyInput, keyFieldsFrom, keyState, MAX_LIMIT, type KeyInput } from "../../src/gateway/keys/key-input";
import { keyInputFromFlags } from "../../src/cli/keys";
import { AppError } from "../../src/errors";
import { parseZonedTime } from "../../src/rules/time-input";
import { thrownAppError } from "../support/app-error";


describe("checkKeyInput: refused, with the field named", () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ["a typo", { qota: 5 }, "qota", /Unknown field 'qota'.*Known fields: name, status/],
    ["the limits object of a view", { name: "k", limits: { rpm: 5 } }, "limits", /Unknown field 'limits'.*send quotaTokens, rpm, rpd, concurrency, maxTokens, balance at the top level/],
    ["a view-only field", { usage: {} }, "usage", /cannot be set/],
    ["rpm 0", { rpm: 0 }, "rpm", /'rpm' is 0, which would refuse every request\. To block a key, disable it \(POST \/admin\/api\/keys\/\{id\}\/disable\); for no limit, use null/],
    ["rpd 0", { rpd: 0 }, "rpd", /'rpd' is 0/],
    ["concurrency 0", { concurrency: 0 }, "concurrency", /'concurrency' is 0/],
    ["quota 0", { quotaTokens: 0 }, "quotaTokens", /'quotaTokens' is 0/],
    ["max tokens 0", { maxTokens: 0 }, "maxTokens", /'maxTokens' is 0/],
    ["balance 0", { balance: 0 }, "balance", /'balance' is 0/],
    ["a balance below one millionth", { balance: 0.0000001 }, "balance", /'balance' must be an amount from 0\.000001/],
    ["a negative limit", { rpm: -1 }, "rpm", /'rpm' must be a whole number from 1 to 9007199254740991, or null for no limit; got -1/],
    ["a fraction", { rpd: 1.5 }, "rpd", /whole number/],
    ["a numeric string", { rpm: "5" }, "rpm", /got "5"/],
    ["quota 1e30", { quotaTokens: 1e30 }, "quotaTokens", /'quotaTokens' is 1e\+30, above the largest supported value/],
    ["one past the safe integers", { rpm: MAX_LIMIT + 1 }, "rpm", /above the largest supported value/],
    ["a balance past exact millionths", { balance: 1e10 }, "balance", /above the largest supported value/],
    ["an empty whitelist", { allowModels: [] }, "allowModels", /'allowModels' is empty, which would allow no model\. To allow every model, use 'allModels': true/],
    ["an empty blacklist", { denyModels: [] }, "denyModels", /'denyModels' is empty/],
    ["both lists", { allowModels: ["a"], denyModels: ["b"] }, "allowModels", /either a model whitelist .* or a blacklist/],
    ["every model and a list", { allModels: true, allowModels: ["a"] }, "allModels", /cannot come with 'allowModels'/],
    ["a time without zone", { expiresAt: "2026-01-01T10:00:00" }, "expiresAt", /'expiresAt' must be an ISO 8601 date-time with a time zone/],
    ["a bare date", { notBefore: "2026-01-01" }, "notBefore", /time zone/],
    ["a day not on the calendar", { expiresAt: "2026-02-30T00:00:00Z" }, "expiresAt", /time zone/],
    ["a name starting with a space", { name: " k" }, "name", /may not start with a space/],
    ["an unknown status", { status: "paused" }, "status", /one of active, disabled/],
  ];
  for (const [title, body, param, message] of cases) {
    test(title, () => {
      const e = thrownAppError(() => checkKeyInput(body));
      expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", param]);
      expect(e.message).toMatch(message);
    });
  }

  test("every problem is in the one message; param names the first", () => {
    const e = thrownAppError(() => checkKeyInput({ qota: 5, rpm: 0, allowModels: [] }));
    expect(e.param).toBe("qota");
    for (const part of ["'qota'", "'rpm' is 0", "'allowModels' is empty"]) expect(e.message).toContain(part);
  });

  test("accepted as given: limits, null clears, zoned times, lists", () => {
    const body = {
      name: "k",
      rpm: 1,
      rpd: MAX_LIMIT,
      concurrency: null,
      quotaTokens: 1_000_000,
      balance: 0.5,
      maxTokens: 4096,
      notBefore: "2026-01-01T08:00:00+08:00",
      expiresAt: "2026-06-01T00:00:00Z",
      allowModels: ["demo-*"],
      resetUsage: true,
    };
    expect(checkKeyInput(body)).toEqual(body as KeyInput);
    expect(checkKeyInput({})).toEqual({});
    expect(checkKeyInput({ allModels: true, notBefore: null })).toEqual({ allModels: true, notBefore: null });
  });
});

describe("keyFieldsFrom: the validity period", () => {
  const T = (iso: string) => Date.parse(iso);
  test("times become milliseconds; +08:00 is honoured", () => {
    const f = keyFieldsFrom(checkKeyInput({ notBefore: "2026-01-01T08:00:00+08:00", expiresAt: "2026-01-02T00:00:00Z" }));
    expect([f.notBefore, f.expiresAt]).toEqual([T("2026-01-01T00:00:00Z"), T("2026-01-02T00:00:00Z")]);
  });
  for (const [title, input] of [
    ["notBefore after expiresAt", { notBefore: "2026-02-01T00:00:00Z", expiresAt: "2026-01-01T00:00:00Z" }],
    ["notBefore equal to expiresAt", { notBefore: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:00:00Z" }],
  ] as const) {
    test(`refused: ${title}, naming both fields`, () => {
      const e = thrownAppError(() => keyFieldsFrom(checkKeyInput(input)));
      expect(e.param).toBe("notBefore");
      expect(e.message).toMatch(/'notBefore' .* must be earlier than 'expiresAt' .*: the key would never be valid/);
    });
  }
  const stored = { notBefore: T("2026-01-01T00:00:00Z"), expiresAt: T("2026-03-01T00:00:00Z") };
  test("an update of one side is compared with the stored other side", () => {
    const late = thrownAppError(() => keyFieldsFrom(checkKeyInput({ notBefore: "2026-03-01T00:00:00Z" }), stored));
    expect(late.param).toBe("notBefore");
    expect(late.message).toContain("'expiresAt' 2026-03-01T00:00:00.000Z (stored)");
    const early = thrownAppError(() => keyFieldsFrom(checkKeyInput({ expiresAt: "2025-12-31T23:59:59Z" }), stored));
    expect(early.param).toBe("expiresAt");
    expect(early.message).toContain("'notBefore' 2026-01-01T00:00:00.000Z (stored)");
  });
  test("clearing one side, or moving both together, is fine", () => {
    expect(keyFieldsFrom(checkKeyInput({ expiresAt: null, notBefore: "2027-01-01T00:00:00Z" }), stored).notBefore).toBe(T("2027-01-01T00:00:00Z"));
    expect(keyFieldsFrom(checkKeyInput({ notBefore: "2027-01-01T00:00:00Z", expiresAt: "2027-02-01T00:00:00Z" }), stored).expiresAt).toBe(T("2027-02-01T00:00:00Z"));
    // A change that touches neither date does not re-judge the stored ones.
    expect(keyFieldsFrom(checkKeyInput({ rpm: 5 }), { notBefore: 2, expiresAt: 1 }).rpm).toBe(5);
  });
});

describe("the CLI goes through the same rules, in the words of its flags", () => {
  const cases: Array<[Record<string, string | boolean>, RegExp]> = [
    [{ rpm: "0" }, /^--rpm is 0, .*disable it \(gantry keys disable ID\); for no limit, use "none"\.$/],
    [{ "quota-tokens": "1e30" }, /^--quota-tokens is 1e\+30, above the largest supported value/],
    [{ "allow-models": "" }, /^--allow-models is empty, .*use --all-models\.$/],
    [{ "allow-models": " , " }, /^--allow-models is empty/],
    [{ "expires-at": "2026-01-01" }, /^--expires-at must be an ISO 8601 date-time with a time zone/],
  ];
  for (const [flags, message] of cases) {
    test(JSON.stringify(flags), () => expect(thrownAppError(() => keyInputFromFlags(flags)).message).toMatch(message));
  }
  test("the period check names the flags", () => {
    const input = keyInputFromFlags({ "not-before": "2026-02-01T00:00:00Z", "expires-at": "2026-01-01T00:00:00Z" });
    expect(thrownAppError(() => keyFieldsFrom(input, null, "cli")).message).toMatch(/^--not-before .* must be earlier than --expires-at /);
  });
});

describe("keyState, in admission's order", () => {
  const now = 1_000_000;
  test("each state", () => {
    expect(keyState({ status: "active", notBefore: null, expiresAt: null }, now)).toBe("active");
    expect(keyState({ status: "active", notBefore: now + 1, expiresAt: null }, now)).toBe("not_yet_valid");
    expect(keyState({ status: "active", notBefore: null, expiresAt: now }, now)).toBe("expired");
    expect(keyState({ status: "disabled", notBefore: null, expiresAt: now - 1 }, now)).toBe("disabled");
  });
});

describe("parseZonedTime", () => {
  test("zoned times only, on the calendar", () => {
    expect(parseZonedTime("2026-01-01T08:00+08:00")).toBe(Date.parse("2026-01-01T00:00:00Z"));
    expect(parseZonedTime(" 2026-01-01T08:00:00.5z ")).toBe(Date.parse("2026-01-01T08:00:00.500Z"));
    expect(parseZonedTime("2024-02-29T00:00:00Z")).toBe(Date.parse("2024-02-29T00:00:00Z"));
    for (const bad of ["2026-01-01", "2026-01-01T10:00:00", "2026-01-01 10:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "tomorrow", ""]) {
      expect(parseZonedTime(bad)).toBeNull();
    }
  });
});
