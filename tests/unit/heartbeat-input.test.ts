import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import {
  HEARTBEAT_FIELD_LIMITS,
  heartbeatReply,
  mergeHeartbeats,
  parseHeartbeat,
  resolveClientId,
} from "../../src/site/heartbeats/rules/heartbeat-input";
import { heartbeatRecord } from "../support/fixtures";
import { thrownAppError } from "../support/app-error";

const NOW = Date.parse("2025-06-15T12:00:00.000Z");


describe("resolveClientId", () => {
  test("header only", () => expect(resolveClientId("abc-123", {})).toBe("abc-123"));
  test("body only", () => expect(resolveClientId(null, { clientId: "b-1" })).toBe("b-1"));
  test("header preferred over a different body id", () => expect(resolveClientId("from-header", { clientId: "from-body" })).toBe("from-header"));
  test("whitespace around the header is trimmed", () => expect(resolveClientId("  id-1 ", {})).toBe("id-1"));
  test("an empty header falls back to the body", () => expect(resolveClientId("  ", { clientId: "b" })).toBe("b"));

  const missing: Array<[string | null, Record<string, unknown>]> = [
    [null, {}],
    ["", {}],
    [null, { clientId: "" }],
    [null, { clientId: "   " }],
    [null, { clientId: null }],
    ["", { other: "x" }],
  ];
  for (const [h, b] of missing) {
    test(`missing: header ${JSON.stringify(h)}, body ${JSON.stringify(b)}`, () => {
      const e = thrownAppError(() => resolveClientId(h, b));
      expect(e.status).toBe(400);
      expect(e.code).toBe("missing_client_id");
    });
  }

  const invalid: Array<[string, string | null, Record<string, unknown>, string]> = [
    ["overlong header", "x".repeat(129), {}, "X-App-Client-ID"],
    ["space inside header", "a b", {}, "X-App-Client-ID"],
    ["non-ASCII header", "客户端", {}, "X-App-Client-ID"],
    ["invalid header is not replaced by a valid body id", "a b", { clientId: "ok" }, "X-App-Client-ID"],
    ["overlong body id", null, { clientId: "y".repeat(129) }, "clientId"],
    ["numeric body id", null, { clientId: 42 }, "clientId"],
    ["object body id", null, { clientId: { id: "x" } }, "clientId"],
  ];
  for (const [title, h, b, param] of invalid) {
    test(`400 ${title}`, () => {
      const e = thrownAppError(() => resolveClientId(h, b));
      expect(e.status).toBe(400);
      expect(e.code).toBe("invalid_request");
      expect(e.param).toBe(param);
    });
  }
  test("128 characters is the longest accepted id", () => expect(resolveClientId("z".repeat(128), {})).toHaveLength(128));
});

describe("parseHeartbeat", () => {
  test("every field, normalised, with the server's time", () => {
    const r = parseHeartbeat(
      "c1",
      { app: " MyApp ", version: "v1.2.3", platform: "Windows", arch: "X64", runtime: "Electron", locale: "zh_CN", at: 5, ip: "1.2.3.4" },
      NOW,
    );
    expect(r).toEqual({ clientId: "c1", at: NOW, app: "MyApp", version: "1.2.3", platform: "windows", arch: "x64", runtime: "electron", locale: "zh-CN" });
  });
  test("nothing but the id is required; absent fields are null (kept from earlier reports)", () => {
    expect(parseHeartbeat(null, { clientId: "c2" }, NOW)).toEqual({
      clientId: "c2",
      at: NOW,
      app: null,
      version: null,
      platform: null,
      arch: null,
      runtime: null,
      locale: null,
    });
  });
  test("an empty string is sent on purpose and clears the field", () => expect(parseHeartbeat("c", { version: "" }, NOW).version).toBe(""));
  test("a version that is not dotted numeric is refused, naming the field (contract: versions)", () => {
    for (const v of ["2024.06-nightly build", "banana", "1..2", "v", "1.2.3-", "1.2.3+"]) {
      expect(() => parseHeartbeat("c", { version: v }, NOW)).toThrow(expect.objectContaining({ code: "invalid_request", param: "version" }));
    }
    expect(parseHeartbeat("c", { version: "1.0.0-beta.2+build.7" }, NOW).version).toBe("1.0.0-beta.2+build.7");
  });
  test("POSIX locale forms", () => expect(parseHeartbeat("c", { locale: "en_US.UTF-8" }, NOW).locale).toBe("en-US"));
  test("locales are stored in their canonical case, however the client spells them", () => {
    for (const spelling of ["zh-cn", "ZH_cn", "zh-CN", "zh_CN.UTF-8"]) expect(parseHeartbeat("c", { locale: spelling }, NOW).locale).toBe("zh-CN");
    expect(parseHeartbeat("c", { locale: "zh-hant-tw" }, NOW).locale).toBe("zh-Hant-TW");
  });

  for (const [field, max] of Object.entries(HEARTBEAT_FIELD_LIMITS)) {
    const ok =
      field === "locale" ? "a".repeat(8) + "-b".repeat((max - 8) / 2) : field === "version" ? "1" + ".1".repeat((max - 1) / 2) + "1".repeat((max - 1) % 2) : "v".repeat(max);
    test(`${field}: ${max} characters accepted, ${max + 1} refused (not truncated)`, () => {
      expect(ok.length).toBeLessThanOrEqual(max);
      expect(parseHeartbeat("c", { [field]: ok }, NOW)[field as "app"]).not.toBeNull();
      const e = thrownAppError(() => parseHeartbeat("c", { [field]: "v".repeat(max + 1) }, NOW));
      expect(e.status).toBe(400);
      expect(e.param).toBe(field);
    });
  }

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["number version", { version: 1.2 }, "version"],
    ["boolean platform", { platform: true }, "platform"],
    ["array app", { app: ["a"] }, "app"],
    ["control character", { runtime: "node\u0000" }, "runtime"],
    ["newline", { app: "a\nb" }, "app"],
    ["not a language tag", { locale: "english please" }, "locale"],
  ];
  for (const [title, body, param] of bad) {
    test(`400 ${title}`, () => {
      const e = thrownAppError(() => parseHeartbeat("c", body, NOW));
      expect(e.status).toBe(400);
      expect(e.code).toBe("invalid_request");
      expect(e.param).toBe(param);
    });
  }
});

describe("mergeHeartbeats", () => {
  const hb = heartbeatRecord;

  test("one entry per client, counting every report, in first-arrival order", () => {
    const merged = mergeHeartbeats([hb("a", 1), hb("b", 2), hb("a", 3), hb("a", 4)]);
    expect(merged.map((m) => [m.clientId, m.count, m.firstAt, m.at])).toEqual([
      ["a", 3, 1, 4],
      ["b", 1, 2, 2],
    ]);
  });
  test("the latest report's fields win; fields it lacks come from earlier ones", () => {
    const [m] = mergeHeartbeats([hb("a", 1, { version: "1.0", platform: "linux" }), hb("a", 2, { version: "1.1" })]);
    expect(m.version).toBe("1.1");
    expect(m.platform).toBe("linux");
  });
  test("an older report arriving later does not overwrite newer values", () => {
    const [m] = mergeHeartbeats([hb("a", 5, { version: "2.0" }), hb("a", 3, { version: "1.0", arch: "x64" })]);
    expect(m.version).toBe("2.0");
    expect(m.arch).toBe("x64");
    expect(m.firstAt).toBe(3);
    expect(m.at).toBe(5);
  });
  test("empty batch", () => expect(mergeHeartbeats([])).toEqual([]));
});

test("reply carries the recommended interval and the online window", () => {
  expect(heartbeatReply()).toEqual({ ok: true, nextIntervalSeconds: 60, onlineWindowSeconds: 300 });
});
