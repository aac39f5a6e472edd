import { describe, expect, test } from "bun:test";
import type { AssetRecord, ReleaseRecord } from "../../src/site/releases/release-repository";
import type { GitHubAsset, GitHubRelease } from "../../src/site/releases/rules/github-types";
import { planSync } from "../../src/site/releases/rules/sync-plan";

const NOW = "2026-01-01T00:00:00.000Z";
const HEX = "ab".repeat(32);

function ghAsset(id: number, name: string, over: Partial<GitHubAsset> = {}): GitHubAsset {
  return {
    id,
    name,
    size: 100,
    url: `https://api.github.com/repos/o/r/releases/assets/${id}`,
    browser_download_url: `https://github.com/o/r/releases/download/v/${name}`,
    updated_at: "2025-01-01T00:00:00Z",
    state: "uploaded",
    ...over,
  };
}
function ghRelease(id: number, tag: string, assets: GitHubAsset[], over: Partial<GitHubRelease> = {}): GitHubRelease {
  return { id, tag_name: tag, body: `notes ${tag}`, draft: false, prerelease: false, published_at: "2025-02-01T00:00:00Z", assets, ...over };
}
function localAsset(id: number, name: string, over: Partial<AssetRecord> = {}): AssetRecord {
  return {
    id, releaseId: 1, name, platform: "windows", arch: "x64", fileType: "exe", sha256: HEX, size: 100, upstreamUrl: null,
    mirrored: true, downloads: 0, classifiedByOperator: false, remoteId: null, remoteApiUrl: null, remoteUpdatedAt: null,
    remoteDigest: null, remoteSize: null, mirrorError: null, mirrorPending: false, signatureUrl: null, signatureApiUrl: null,
    createdAt: 0, updatedAt: 0, ...over,
  };
}
function localRelease(id: number, version: string, assets: AssetRecord[], over: Partial<ReleaseRecord> = {}): ReleaseRecord {
  return { id, version, notes: "", publishedAt: NOW, minAppVersion: "", prerelease: false, rolloutPercent: 100, rolloutPaused: false, yanked: false, origin: "github", remoteId: null, createdAt: 0, updatedAt: 0, assets, ...over };
}
const opts = { includePrereleases: false, nowIso: NOW };

describe("planSync: which releases", () => {
  test("drafts skipped silently, pre-releases and non-version tags reported, duplicates refused", () => {
    const plan = planSync([], [
      ghRelease(1, "v1.0.0", []),
      ghRelease(2, "v2.0.0", [], { draft: true }),
      ghRelease(3, "v1.1.0-beta.1", [], { prerelease: true }),
      ghRelease(4, "nightly", []),
      ghRelease(5, "1.0.0", []),
    ], opts);
    expect(plan.releases.map((r) => r.version)).toEqual(["v1.0.0"]);
    expect(plan.skipped.map((s) => s.tag).sort()).toEqual(["1.0.0", "nightly", "v1.1.0-beta.1"]);
  });

  test("pre-releases with includePrereleases", () => {
    const plan = planSync([], [ghRelease(3, "v1.1.0-beta.1", [], { prerelease: true })], { ...opts, includePrereleases: true });
    expect(plan.releases[0].create).toMatchObject({ version: "v1.1.0-beta.1", prerelease: true, origin: "github", remoteId: 3 });
  });

  test("a new release inherits the floor of the nearest lower release; existing floors are never written", () => {
    const local = [
      localRelease(1, "1.0.0", [], { minAppVersion: "0.9.0", origin: "manual" }),
      localRelease(2, "2.0.0", [], { minAppVersion: "1.5.0", remoteId: 20, notes: "old" }),
    ];
    const plan = planSync(local, [ghRelease(10, "v1.5.0", []), ghRelease(20, "v2.0.0", []), ghRelease(30, "v3.0.0", [])], opts);
    const byVersion = Object.fromEntries(plan.releases.map((r) => [r.version, r]));
    expect(byVersion["v1.5.0"].create!.minAppVersion).toBe("0.9.0");
    expect(byVersion["v3.0.0"].create!.minAppVersion).toBe("1.5.0");
    expect(byVersion["2.0.0"].update).toEqual({ notes: "notes v2.0.0", publishedAt: "2025-02-01T00:00:00.000Z" });
    expect("minAppVersion" in byVersion["2.0.0"].update).toBe(false);
  });

  test("a hand-published release is matched by version but never rewritten", () => {
    const local = [localRelease(1, "1.0.0", [localAsset(7, "app-x64-setup.exe")], { origin: "manual", notes: "mine" })];
    const plan = planSync(local, [ghRelease(9, "v1.0.0", [ghAsset(70, "app-x64-setup.exe"), ghAsset(71, "web-1.0.0.zip")])], opts);
    expect(plan.releases[0].existingId).toBe(1);
    expect(plan.releases[0].update).toEqual({ remoteId: 9 });
    expect(plan.releases[0].assets.map((a) => a.name)).toEqual(["web-1.0.0.zip"]);
  });
});

describe("planSync: which assets", () => {
  test("new assets are classified, keep their upstream address and wait for download", () => {
    const plan = planSync([], [ghRelease(1, "v1.0.0", [ghAsset(5, "App-1.0.0-arm64.dmg", { digest: "sha256:" + HEX.toUpperCase() })])], opts);
    expect(plan.releases[0].assets[0]).toEqual({
      name: "App-1.0.0-arm64.dmg",
      existingId: null,
      fields: expect.objectContaining({
        platform: "macos", arch: "arm64", fileType: "dmg", mirrored: false, mirrorPending: true, size: 100,
        upstreamUrl: "https://github.com/o/r/releases/download/v/App-1.0.0-arm64.dmg", remoteDigest: `sha256:${HEX}`,
      }),
    });
  });

  test("remote names are sanitised; uploads in progress and non-http addresses are not trusted", () => {
    const plan = planSync([], [ghRelease(1, "v1.0.0", [
      ghAsset(1, "../../etc/passwd"),
      ghAsset(2, "half.exe", { state: "starter" }),
      ghAsset(3, "odd.exe", { browser_download_url: "file:///etc/passwd", url: "javascript:alert(1)" }),
    ])], opts);
    const assets = plan.releases[0].assets;
    expect(assets.map((a) => a.name)).toEqual(["passwd", "odd.exe"]);
    expect(assets[1].fields.upstreamUrl).toBeNull();
    expect(assets[1].fields.remoteApiUrl).toBeNull();
  });

  test("unchanged assets are not downloaded again; changed ones are, unless we hold that digest", () => {
    const synced = (id: number, name: string, over: Partial<AssetRecord> = {}) =>
      localAsset(id, name, { remoteId: id * 10, remoteUpdatedAt: "2025-01-01T00:00:00Z", remoteSize: 100, ...over });
    const local = [localRelease(1, "1.0.0", [
      synced(1, "a.exe"),
      synced(2, "b.exe"),
      synced(3, "c.exe", { classifiedByOperator: true, platform: "linux" }),
    ], { remoteId: 9 })];
    const plan = planSync(local, [ghRelease(9, "v1.0.0", [
      ghAsset(10, "a.exe"),
      ghAsset(20, "b.exe", { updated_at: "2025-06-01T00:00:00Z", size: 120 }),
      ghAsset(30, "c.exe", { updated_at: "2025-06-01T00:00:00Z", digest: `sha256:${HEX}` }),
    ])], opts);
    const [a, b, c] = plan.releases[0].assets;
    expect(a.fields.mirrorPending).toBeUndefined();
    expect(b.fields.mirrorPending).toBe(true);
    // The old bytes keep being served, so their size stays.
    expect(b.fields.size).toBeUndefined();
    expect(c.fields.mirrorPending).toBeUndefined();
    expect(c.fields.platform).toBeUndefined();
  });
});

describe("planSync: signatures beside assets", () => {
  const sigOf = (id: number, name: string) => ghAsset(id, name, { size: 300 });

  test("NAME.minisig (else NAME.sig) is NAME's signature, not an asset; one with no NAME is ignored", () => {
    const plan = planSync([], [ghRelease(1, "v1.0.0", [
      ghAsset(1, "App-1.0.0-x64-setup.exe"),
      sigOf(2, "App-1.0.0-x64-setup.exe.minisig"),
      ghAsset(3, "App-1.0.0-arm64.dmg"),
      sigOf(4, "App-1.0.0-arm64.dmg.sig"),
      ghAsset(5, "web-1.0.0.zip"),
      sigOf(6, "web-1.0.0.zip.sig"),
      sigOf(7, "web-1.0.0.zip.minisig"),
      sigOf(8, "orphan.AppImage.minisig"),
      sigOf(9, "checksums.sig"),
      ghAsset(10, "App-1.0.0-amd64.deb"),
    ])], opts);
    const assets = plan.releases[0].assets;
    expect(assets.map((a) => a.name)).toEqual(["App-1.0.0-x64-setup.exe", "App-1.0.0-arm64.dmg", "web-1.0.0.zip", "App-1.0.0-amd64.deb"]);
    const byName = Object.fromEntries(assets.map((a) => [a.name, a.fields]));
    expect(byName["App-1.0.0-x64-setup.exe"]).toMatchObject({
      signatureUrl: "https://github.com/o/r/releases/download/v/App-1.0.0-x64-setup.exe.minisig",
      signatureApiUrl: "https://api.github.com/repos/o/r/releases/assets/2",
    });
    expect(byName["App-1.0.0-arm64.dmg"].signatureApiUrl).toBe("https://api.github.com/repos/o/r/releases/assets/4");
    // Both beside it: the .minisig wins, as publish reads FILE.minisig before FILE.sig.
    expect(byName["web-1.0.0.zip"].signatureApiUrl).toBe("https://api.github.com/repos/o/r/releases/assets/7");
    expect(byName["App-1.0.0-amd64.deb"]).toMatchObject({ signatureUrl: null, signatureApiUrl: null });
  });

  test("a signature still uploading is none; non-http addresses are not trusted", () => {
    const plan = planSync([], [ghRelease(1, "v1.0.0", [
      ghAsset(1, "a.exe"),
      ghAsset(2, "a.exe.minisig", { state: "starter" }),
      ghAsset(3, "b.exe"),
      ghAsset(4, "b.exe.minisig", { browser_download_url: "file:///etc/passwd", url: "javascript:x" }),
    ])], opts);
    const [a, b] = plan.releases[0].assets;
    expect(plan.releases[0].assets.map((x) => x.name)).toEqual(["a.exe", "b.exe"]);
    expect(a.fields).toMatchObject({ signatureUrl: null, signatureApiUrl: null });
    expect(b.fields).toMatchObject({ signatureUrl: null, signatureApiUrl: null });
  });

  test("a signature uploaded or replaced after the bytes were mirrored has them fetched and checked again; an unchanged one does not", () => {
    const synced = (id: number, name: string, over: Partial<AssetRecord> = {}) =>
      localAsset(id, name, { remoteId: id * 10, remoteUpdatedAt: "2025-01-01T00:00:00Z", remoteSize: 100, ...over });
    const apiOf = (id: number) => `https://api.github.com/repos/o/r/releases/assets/${id}`;
    const local = [localRelease(1, "1.0.0", [
      synced(1, "same.exe", { signatureApiUrl: apiOf(11), signature: "old" }),
      synced(2, "new.exe"),
      synced(3, "replaced.exe", { signatureApiUrl: apiOf(31) }),
      synced(4, "gone.exe", { signatureApiUrl: apiOf(41), signature: "kept" }),
    ], { remoteId: 9 })];
    const plan = planSync(local, [ghRelease(9, "v1.0.0", [
      ghAsset(10, "same.exe"), sigOf(11, "same.exe.minisig"),
      ghAsset(20, "new.exe"), sigOf(21, "new.exe.minisig"),
      ghAsset(30, "replaced.exe"), sigOf(32, "replaced.exe.minisig"),
      ghAsset(40, "gone.exe"),
    ])], opts);
    const byName = Object.fromEntries(plan.releases[0].assets.map((a) => [a.name, a.fields]));
    expect(byName["same.exe"].mirrorPending).toBeUndefined();
    expect(byName["new.exe"]).toMatchObject({ mirrorPending: true, signatureApiUrl: apiOf(21) });
    expect(byName["replaced.exe"]).toMatchObject({ mirrorPending: true, signatureApiUrl: apiOf(32) });
    // Removed upstream: nothing left to fetch it from; the text kept with the mirrored bytes is not touched.
    expect(byName["gone.exe"]).toMatchObject({ signatureUrl: null, signatureApiUrl: null });
    expect(byName["gone.exe"].mirrorPending).toBeUndefined();
    expect("signature" in byName["gone.exe"]).toBe(false);
  });
});
