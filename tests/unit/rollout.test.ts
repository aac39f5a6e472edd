import { describe, expect, test } from "bun:test";
import { ROLLOUT_BUCKETS, rolloutBucket, rolloutClientId, rolloutOffers } from "../../src/site/releases/rules/rollout";
import { chooseVariant, planLatest, planLegacyManifest, buildLegacyManifest } from "../../src/site/releases/rules/latest";
import { classifyAsset } from "../../src/site/releases/rules/classify";
import type { Asset, Release } from "../../src/site/releases/release-repository";

const ids = Array.from({ length: 10_000 }, (_, i) => `client-${i}-${(i * 2654435761) % 1000003}`);

describe("rolloutBucket", () => {
  test("stable: the same (id, version) always gives the same bucket, in range, whatever the version's spelling", () => {
    for (const id of ids.slice(0, 200)) {
      const b = rolloutBucket(id, "1.4.0");
      expect(b).toBe(rolloutBucket(id, "1.4.0"));
      expect(b).toBe(rolloutBucket(id, "v1.4.0"));
      expect(Number.isInteger(b) && b >= 0 && b < ROLLOUT_BUCKETS).toBe(true);
    }
    // Pinned: floor(first 32 bits of SHA-256("1.2.3\nclient-a") × 10000 / 2^32), checked with sha256sum. A change
    // of the hash would move clients between groups mid-rollout.
    expect([rolloutBucket("client-a", "1.2.3"), rolloutBucket("client-b", "1.2.3")]).toEqual([3874, 7736]);
  });

  test("uniform within ±2 points over 10,000 ids, at every percentage", () => {
    for (const p of [1, 5, 10, 25, 30, 50, 60, 75, 90, 99]) {
      const inGroup = ids.filter((id) => rolloutOffers({ version: "2.0.0", rolloutPercent: p }, id)).length;
      expect(Math.abs((inGroup / ids.length) * 100 - p)).toBeLessThanOrEqual(2);
    }
    // Ten equal slices of the buckets each hold about a tenth of the ids.
    const slices = new Array(10).fill(0);
    for (const id of ids) slices[Math.floor(rolloutBucket(id, "2.0.0") / (ROLLOUT_BUCKETS / 10))]++;
    for (const n of slices) expect(Math.abs(n - 1000)).toBeLessThanOrEqual(200);
  });

  test("monotone: raising the percentage keeps every client already in", () => {
    let previous = new Set<string>();
    for (let p = 0; p <= 100; p += 5) {
      const now = new Set(ids.filter((id) => rolloutOffers({ version: "3.1.0", rolloutPercent: p }, id)));
      for (const id of previous) expect(now.has(id)).toBe(true);
      expect(now.size).toBeGreaterThanOrEqual(previous.size);
      previous = now;
    }
    expect(previous.size).toBe(ids.length);
  });

  test("each release draws its own group", () => {
    const a = ids.filter((id) => rolloutOffers({ version: "1.0.0", rolloutPercent: 10 }, id));
    const b = new Set(ids.filter((id) => rolloutOffers({ version: "1.1.0", rolloutPercent: 10 }, id)));
    const both = a.filter((id) => b.has(id)).length;
    expect(both).toBeLessThan(a.length / 3);
  });

  test("no id, 0%, yanked: not offered; 100%: offered to everyone, id or not", () => {
    expect(rolloutOffers({ version: "1.0.0", rolloutPercent: 99 }, null)).toBe(false);
    expect(rolloutOffers({ version: "1.0.0", rolloutPercent: 0 }, "x")).toBe(false);
    expect(rolloutOffers({ version: "1.0.0", rolloutPercent: 100 }, null)).toBe(true);
    expect(rolloutOffers({ version: "1.0.0" }, null)).toBe(true);
    expect(rolloutOffers({ version: "1.0.0", yanked: true }, "x")).toBe(false);
  });

  test("client ids: visible ASCII, 1-128 characters; anything else is no id", () => {
    expect(rolloutClientId(" abc ")).toBe("abc");
    expect(rolloutClientId("")).toBeNull();
    expect(rolloutClientId(null)).toBeNull();
    expect(rolloutClientId("a b")).toBeNull();
    expect(rolloutClientId("é")).toBeNull();
    expect(rolloutClientId("x".repeat(129))).toBeNull();
    expect(rolloutClientId("x".repeat(128))).toBe("x".repeat(128));
  });
});


let nextId = 1;
function asset(name: string): Asset {
  return { id: nextId++, releaseId: 1, name, ...classifyAsset(name), sha256: "ab".repeat(32), size: 1, upstreamUrl: null, mirrored: true, downloads: 0 } as Asset;
}
function release(version: string, over: Partial<Release> = {}, names = [`App-${version}-x64-setup.exe`, `web-${version}.zip`]): Release {
  return { id: nextId++, version, notes: "", publishedAt: "2025-01-01T00:00:00Z", minAppVersion: "", prerelease: false, assets: names.map(asset), ...over };
}

describe("choosing a release for a client", () => {
  const releases = [
    release("1.5.0", { rolloutPercent: 10 }),
    release("1.4.0", { rolloutPercent: 50 }),
    release("1.3.0", { yanked: true }),
    release("1.2.0"),
    release("1.1.0", { rolloutPercent: 20 }), // older than the full release: never offered
  ];

  test("the plan: staged releases newer than the newest full one; yanked ones left out", () => {
    const plan = planLatest(releases, {});
    expect(plan.staged.map((r) => r.version)).toEqual(["1.5.0", "1.4.0"]);
    expect(plan.base?.version).toBe("1.2.0");
    expect(planLatest([release("1.0.0")], {}).staged).toEqual([]);
  });

  test("each client gets the newest release whose group it is in; no id gets the full one", () => {
    const plan = planLatest(releases, {});
    expect(chooseVariant(plan, null)?.version).toBe("1.2.0");
    const counts: Record<string, number> = {};
    for (const id of ids) {
      const v = chooseVariant(plan, id)!.version;
      counts[v] = (counts[v] ?? 0) + 1;
      const expected = rolloutOffers(releases[0], id) ? "1.5.0" : rolloutOffers(releases[1], id) ? "1.4.0" : "1.2.0";
      expect(v).toBe(expected);
    }
    expect(Math.abs(counts["1.5.0"] - 1000)).toBeLessThanOrEqual(200);
    expect(Object.keys(counts).sort()).toEqual(["1.2.0", "1.4.0", "1.5.0"]);
  });

  test("a paused rollout takes nobody new: of its group, only a client reporting its version (any spelling) gets it", () => {
    const paused = planLatest([release("1.5.0", { rolloutPercent: 50, rolloutPaused: true }), release("1.2.0")], {});
    const members = ids.filter((id) => rolloutOffers({ version: "1.5.0", rolloutPercent: 50 }, id)).slice(0, 100);
    const outsider = ids.find((id) => !rolloutOffers({ version: "1.5.0", rolloutPercent: 50 }, id))!;
    for (const id of members) {
      expect(chooseVariant(paused, id)?.version).toBe("1.2.0");
      expect(chooseVariant(paused, id, "1.2.0")?.version).toBe("1.2.0");
      expect(chooseVariant(paused, id, "1.5.0")?.version).toBe("1.5.0");
      expect(chooseVariant(paused, id, "v1.5")?.version).toBe("1.5.0");
    }
    // Outside the group it is not offered even to a client that runs it; unpaused, the whole group gets it.
    expect(chooseVariant(paused, outsider, "1.5.0")?.version).toBe("1.2.0");
    const running = planLatest([release("1.5.0", { rolloutPercent: 50 }), release("1.2.0")], {});
    for (const id of members) expect(chooseVariant(running, id)?.version).toBe("1.5.0");
  });

  test("the legacy manifest follows the same rule", () => {
    const inGroup = ids.find((id) => rolloutOffers(releases[0], id))!;
    const ctx = { baseUrl: "https://u.example.com" };
    expect(buildLegacyManifest(releases, ctx)?.version).toBe("1.2.0");
    expect(buildLegacyManifest(releases, ctx, { clientId: inGroup })?.version).toBe("1.5.0");
    expect(planLegacyManifest([release("2.0.0", { rolloutPercent: 5 }, ["App-2.0.0.dmg"]), release("1.9.0")]).staged).toEqual([]);
  });
});
