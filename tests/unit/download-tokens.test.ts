import { describe, expect, test } from "bun:test";
import { isWellFormedToken, judgeToken, newDownloadToken, tokenStorageKey } from "../../src/site/downloads/download-tokens";
import type { TokenRecord } from "../../src/site/downloads/download-repository";

const sha = "cd".repeat(32);
const token = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  tokenHash: "h",
  assetId: 1,
  sha256: sha,
  createdAt: 1_000,
  expiresAt: 601_000,
  consumedAt: null,
  counted: false,
  ...over,
});

describe("download tokens", () => {
  test("256 random bits, URL-safe, never repeating", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const t = newDownloadToken();
      expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(isWellFormedToken(t)).toBe(true);
      seen.add(t);
    }
    expect(seen.size).toBe(1000);
  });

  test("malformed tokens are refused before any lookup", () => {
    for (const bad of ["", "../../etc/passwd", "a".repeat(42), "a".repeat(44), `${"a".repeat(42)}.`, `${"a".repeat(42)}/`, `${"a".repeat(42)}=`]) {
      expect(isWellFormedToken(bad)).toBe(false);
    }
  });

  test("only a digest of the token is stored", () => {
    const t = newDownloadToken();
    expect(tokenStorageKey(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenStorageKey(t)).not.toContain(t);
  });

  test("rules of use", () => {
    expect(judgeToken(token(), sha, 1_000)).toEqual({ ok: true });
    expect(judgeToken(token(), sha, 600_999)).toEqual({ ok: true });
    expect(judgeToken(token(), sha, 601_000)).toEqual({ ok: false, status: 410, reason: "expired" });
    expect(judgeToken(token({ consumedAt: 5_000 }), sha, 6_000)).toEqual({ ok: false, status: 410, reason: "used" });
    expect(judgeToken(token(), "ef".repeat(32), 2_000)).toEqual({ ok: false, status: 410, reason: "changed" });
    expect(judgeToken(null, sha, 2_000)).toEqual({ ok: false, status: 404, reason: "unknown" });
    // The asset is gone (deleted): the link is unknown.
    expect(judgeToken(token(), null, 2_000)).toEqual({ ok: false, status: 404, reason: "unknown" });
    // A proxied asset with no digest yet: bound to "".
    expect(judgeToken(token({ sha256: "" }), "", 2_000)).toEqual({ ok: true });
  });
});
