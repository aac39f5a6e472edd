/** The pure parts of the back office's security and charts: throttle, cookies, cross-site checks. */
import { describe, expect, test } from "bun:test";
import { isCrossSite, signInLocation } from "../../src/http/access-guard";
import { readCookie, serializeCookie } from "../../src/http/cookies";
import { FailureThrottle, addressKey } from "../../src/http/throttle";
import { safeNext } from "../../src/admin/pages";
import { fillOverview } from "../../src/admin/metrics-api";
import { portalView, portalSince } from "../../src/portal/view";

describe("FailureThrottle", () => {
  test("free failures, then doubling lockouts up to the cap; success clears", () => {
    let now = 0;
    const t = new FailureThrottle(() => now, { freeFailures: 2, baseDelayMs: 1000, maxDelayMs: 4000 });
    t.fail("10.0.0.1");
    t.fail("10.0.0.1");
    expect(t.retryAfterMs("10.0.0.1")).toBe(0);
    t.fail("10.0.0.1");
    expect(t.retryAfterMs("10.0.0.1")).toBe(1000);
    expect(t.retryAfterMs("10.0.0.2")).toBe(0);
    expect([4, 5, 6, 40].map((n) => t.delayAfter(n))).toEqual([2000, 4000, 4000, 4000]);
    now = 1000;
    expect(t.retryAfterMs("10.0.0.1")).toBe(0);
    t.succeed("10.0.0.1");
    t.fail("10.0.0.1");
    expect(t.retryAfterMs("10.0.0.1")).toBe(0);
  });

  test("forgets an address after an hour without failures", () => {
    let now = 0;
    const t = new FailureThrottle(() => now, { freeFailures: 0, baseDelayMs: 1000 });
    t.fail("1.2.3.4");
    expect(t.retryAfterMs("1.2.3.4")).toBe(1000);
    now = 3_600_000 + 1001;
    t.fail("1.2.3.4");
    expect(t.retryAfterMs("1.2.3.4")).toBe(1000);
  });

  test("IPv6 addresses count per /64; IPv4-mapped ones as IPv4", () => {
    expect(addressKey("2001:db8:1:2::1")).toBe(addressKey("2001:db8:1:2:ffff::9"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("::ffff:192.0.2.7")).toBe(addressKey("::ffff:192.0.2.7"));
  });

  test("memory stays bounded under a flood of addresses", () => {
    const t = new FailureThrottle(() => 0, { freeFailures: 0, maxEntries: 3 });
    for (const a of ["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"]) t.fail(a);
    expect(t.retryAfterMs("1.1.1.1")).toBe(0);
    expect(t.retryAfterMs("4.4.4.4")).toBeGreaterThan(0);
  });
});

describe("cookies and redirects", () => {
  test("readCookie finds one cookie among many", () => {
    expect(readCookie("a=1; gantry_admin=xyz; b=2", "gantry_admin")).toBe("xyz");
    expect(readCookie("xgantry_admin=1", "gantry_admin")).toBeNull();
    expect(readCookie(null, "a")).toBeNull();
  });

  test("serializeCookie", () => {
    expect(serializeCookie("n", "v", { secure: true })).toBe("n=v; Path=/; HttpOnly; SameSite=Strict; Secure");
    expect(serializeCookie("n", "", { secure: false, maxAgeSeconds: 0 })).toBe("n=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
  });

  test("only our own pages are sign-in destinations", () => {
    expect(safeNext("/admin/keys")).toBe("/admin/keys");
    for (const bad of ["//evil.example", "https://evil.example", "/admin/keys?x", "/admin/../etc", null, ""]) expect(safeNext(bad)).toBeUndefined();
    expect(signInLocation("/admin/keys")).toBe("/admin/sign-in?next=%2Fadmin%2Fkeys");
    expect(signInLocation("/admin/api/x/y")).toBe("/admin/sign-in");
  });

  test("isCrossSite: fetch metadata first, then Origin against our public host", () => {
    const config = { publicUrl: "", trustedProxies: [] };
    const req = (headers: Record<string, string>) => new Request("http://gantry.local:8080/admin/api/keys", { method: "POST", headers: { host: "gantry.local:8080", ...headers } });
    expect(isCrossSite(req({ "sec-fetch-site": "same-origin" }), config)).toBe(false);
    expect(isCrossSite(req({ "sec-fetch-site": "same-site" }), config)).toBe(true);
    expect(isCrossSite(req({ "sec-fetch-site": "cross-site", origin: "http://gantry.local:8080" }), config)).toBe(true);
    expect(isCrossSite(req({ origin: "http://gantry.local:8080" }), config)).toBe(false);
    expect(isCrossSite(req({ origin: "http://evil.example" }), config)).toBe(true);
    expect(isCrossSite(req({ origin: "null" }), config)).toBe(true);
    expect(isCrossSite(req({}), config)).toBe(false);
    expect(isCrossSite(req({ origin: "https://gantry.example.com" }), { publicUrl: "https://gantry.example.com", trustedProxies: [] })).toBe(false);
  });
});

describe("chart and portal data", () => {
  test("fillOverview gives every bucket, rates per minute and null latency without traffic", () => {
    const points = fillOverview(
      [{ bucket: 120_000, requests: 4, errors: 1, inputTokens: 10, outputTokens: 5, cost: 0 }],
      [{ bucket: 120_000, avgTtfbMs: 12.4, maxTtfbMs: 20, avgDurationMs: 30 }],
      0,
      60_000,
      3,
    );
    expect(points.map((p) => p.requests)).toEqual([0, 0, 4]);
    expect(points[2]).toMatchObject({ errorRate: 25, requestsPerMinute: 4, avgTtfbMs: 12, maxTtfbMs: 20 });
    expect(points[0]).toMatchObject({ errorRate: null, avgTtfbMs: null });
  });

  test("portalView: 30 UTC days, today last, no key id", () => {
    const now = Date.parse("2025-06-30T15:00:00Z");
    const key = {
      id: "key_x", name: "n", prefix: "gk-abc", hash: "h", status: "active", notBefore: null, expiresAt: null, modelMode: null, models: [],
      quotaTokens: 100, balance: null, rpm: null, rpd: null, concurrency: null, maxTokens: null, createdAt: 0, updatedAt: 0,
    } as any;
    const today = Date.parse("2025-06-30T00:00:00Z");
    const view = portalView(key, { requests: 2, inputTokens: 30, outputTokens: 10, tokens: 40, spent: 0, resetAt: null }, [{ bucket: today, requests: 2, errors: 0, inputTokens: 30, outputTokens: 10, cost: 0 }], now);
    expect(portalSince(now)).toBe(Date.parse("2025-06-01T00:00:00Z"));
    expect(view.daily).toHaveLength(30);
    expect(view.today).toMatchObject({ day: "2025-06-30", requests: 2 });
    expect(view.key.usage.remainingTokens).toBe(60);
    expect(JSON.stringify(view)).not.toContain("key_x");
    expect(JSON.stringify(view)).not.toContain('"hash"');
  });
});
