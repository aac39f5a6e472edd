import { describe, expect, test } from "bun:test";
import { DownloadTokenSigner, isWellFormedToken, judgeToken } from "../../src/site/downloads/download-tokens";
import { MintLimit } from "../../src/site/downloads/mint-limit";

const sha = "cd".repeat(32);
const signer = new DownloadTokenSigner(crypto.getRandomValues(new Uint8Array(32)));
const other = new DownloadTokenSigner(crypto.getRandomValues(new Uint8Array(32)));
const IP = "203.0.113.7";

describe("download tokens", () => {
  test("URL-safe, never repeating, and they carry no address or digest in the clear", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const t = signer.mint(7, sha, IP, 601_000);
      expect(t).toMatch(/^[A-Za-z0-9_-]{108}$/);
      expect(isWellFormedToken(t)).toBe(true);
      expect(Buffer.from(t, "base64url").toString("latin1")).not.toContain(IP);
      seen.add(t);
    }
    expect(seen.size).toBe(1000);
  });

  test("malformed tokens are refused before any lookup", () => {
    for (const bad of ["", "../../etc/passwd", "a".repeat(107), "a".repeat(109), `${"a".repeat(107)}.`, `${"a".repeat(107)}/`, `${"a".repeat(107)}=`]) {
      expect(isWellFormedToken(bad)).toBe(false);
      expect(signer.open(bad, IP)).toBeNull();
    }
  });

  test("cannot be forged or altered: another secret, or any flipped bit, is refused", () => {
    const t = signer.mint(7, sha, IP, 601_000);
    expect(signer.open(t, IP)).toMatchObject({ assetId: 7, expiresAt: 601_000, sameClient: true });
    expect(other.open(t, IP)).toBeNull();
    const raw = Buffer.from(t, "base64url");
    for (let i = 0; i < raw.length; i++) {
      const flipped = Buffer.from(raw);
      flipped[i] ^= 1;
      expect(signer.open(flipped.toString("base64url"), IP)).toBeNull();
    }
  });

  test("rules of use: expiry, new bytes, another client (an IPv6 client is its /64)", () => {
    const t = signer.mint(1, sha, IP, 601_000);
    const open = (client = IP) => signer.open(t, client);
    expect(judgeToken(open(), sha, 1_000)).toEqual({ ok: true });
    expect(judgeToken(open(), sha, 600_999)).toEqual({ ok: true });
    expect(judgeToken(open(), sha, 601_000)).toEqual({ ok: false, status: 410, reason: "expired" });
    expect(judgeToken(open(), "ef".repeat(32), 2_000)).toEqual({ ok: false, status: 410, reason: "changed" });
    expect(judgeToken(open("203.0.113.8"), sha, 2_000)).toEqual({ ok: false, status: 410, reason: "elsewhere" });
    expect(judgeToken(null, sha, 2_000)).toEqual({ ok: false, status: 404, reason: "unknown" });
    // The asset is gone (deleted): the link is unknown.
    expect(judgeToken(open(), null, 2_000)).toEqual({ ok: false, status: 404, reason: "unknown" });
    // A proxied asset with no digest yet: bound to "".
    expect(judgeToken(signer.open(signer.mint(1, "", IP, 601_000), IP), "", 2_000)).toEqual({ ok: true });
    const v6 = signer.mint(1, sha, "2001:db8:1:2::10", 601_000);
    expect(judgeToken(signer.open(v6, "2001:db8:1:2:aaaa::1"), sha, 2_000)).toEqual({ ok: true });
    expect(judgeToken(signer.open(v6, "2001:db8:1:3::10"), sha, 2_000)).toMatchObject({ reason: "elsewhere" });
  });

  test("the count key names one client's download of one file, and does not reveal the address", () => {
    const k = signer.countKey(1, sha, IP);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(signer.countKey(1, sha, IP)).toBe(k);
    expect(signer.countKey(2, sha, IP)).not.toBe(k);
    expect(signer.countKey(1, "ef".repeat(32), IP)).not.toBe(k);
    expect(signer.countKey(1, sha, "203.0.113.8")).not.toBe(k);
    expect(other.countKey(1, sha, IP)).not.toBe(k);
  });
});

describe("mint limit", () => {
  test("perMinute links at once per address, then one per 60/perMinute s; others unaffected; 0 = no limit", () => {
    const limit = new MintLimit(3);
    expect([0, 0, 0].map(() => limit.take("198.51.100.1", 0))).toEqual([0, 0, 0]);
    expect(limit.take("198.51.100.1", 0)).toBe(20_000);
    expect(limit.take("198.51.100.2", 0)).toBe(0);
    expect(limit.take("198.51.100.1", 19_999)).toBeGreaterThan(0);
    expect(limit.take("198.51.100.1", 20_000)).toBe(0);
    const none = new MintLimit(0);
    for (let i = 0; i < 1000; i++) expect(none.take("198.51.100.1", 0)).toBe(0);
  });

  test("memory stays bounded under many addresses", () => {
    const limit = new MintLimit(1, 100);
    for (let i = 0; i < 1000; i++) limit.take(`10.0.${i >> 8}.${i & 255}`, 0);
    expect((limit as unknown as { buckets: Map<string, unknown> }).buckets.size).toBe(100);
  });
});
