/**
 * What every ReleaseRepository and DownloadRepository must do, written against the interfaces only: a backend's
 * test file calls `releaseRepositoryConformance` with a way to open an empty store of both.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { DownloadRepository } from "../../src/site/downloads/download-repository";
import type { NewRelease, ReleaseRecord, ReleaseRepository } from "../../src/site/releases/release-repository";
import { processTag } from "../../src/state/process-owner";

export interface ReleaseRepositoryFixture {
  releases: ReleaseRepository;
  downloads: DownloadRepository;
  /** How many committed changes the repository reported (its change-feed touches). */
  changes(): number;
  close(): Promise<void> | void;
}

const SHA_A = "a".repeat(64);
const SHA_B = "b".repeat(64);
const rel = (version: string, more: Partial<NewRelease> = {}): NewRelease => ({ version, publishedAt: "2026-01-01T00:00:00Z", ...more });
const put = (version: string, more: Partial<NewRelease> = {}) => ({ create: rel(version, more), change: more });
const mirrored = (sha: string, size = 10) => ({ sha256: sha, size, mirrored: true, upstreamUrl: null });

export function releaseRepositoryConformance(backend: string, make: () => Promise<ReleaseRepositoryFixture>): void {
  describe(`ReleaseRepository conformance: ${backend}`, () => {
    let fx: ReleaseRepositoryFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("create stores the metadata; the same version in another spelling is refused (null)", async () => {
      const { releases } = await open();
      const made = await releases.create(rel("v1.2.0", { notes: "n", minAppVersion: "1.0.0", prerelease: true, origin: "github", remoteId: 7 }));
      expect(made).toMatchObject({ version: "v1.2.0", notes: "n", minAppVersion: "1.0.0", prerelease: true, origin: "github", remoteId: 7, assets: [] });
      expect(await releases.create(rel("1.2.0"))).toBeNull();
      expect(await releases.get("1.2.0")).toEqual(made);
      expect(await releases.getById(made!.id)).toEqual(made);
      expect(await releases.get("9.9.9")).toBeNull();
      expect(await releases.getById(123456)).toBeNull();
    });

    test("a release's rollout: 100%, not paused, not yanked by default; set at creation, changed by update and put", async () => {
      const { releases } = await open();
      const plain = await releases.create(rel("3.0.0"));
      expect(plain).toMatchObject({ rolloutPercent: 100, rolloutPaused: false, yanked: false });
      const staged = await releases.create(rel("3.1.0", { rolloutPercent: 30 }));
      expect(staged).toMatchObject({ rolloutPercent: 30, rolloutPaused: false, yanked: false });
      await releases.update(staged!.id, { rolloutPaused: true });
      expect(await releases.get("3.1.0")).toMatchObject({ rolloutPercent: 30, rolloutPaused: true, yanked: false });
      await releases.update(staged!.id, { rolloutPaused: false, rolloutPercent: 60, yanked: true });
      expect(await releases.getById(staged!.id)).toMatchObject({ rolloutPercent: 60, rolloutPaused: false, yanked: true });
      const again = await releases.put({ create: rel("3.0.0"), change: { rolloutPercent: 0 } });
      expect(again).toMatchObject({ id: plain!.id, rolloutPercent: 0 });
      // A sync's batch leaves the rollout alone.
      await releases.applyBatch([{ version: "3.1.0", existingId: staged!.id, create: null, update: { notes: "synced" }, assets: [] }]);
      expect(await releases.getById(staged!.id)).toMatchObject({ notes: "synced", rolloutPercent: 60, yanked: true });
      expect((await releases.list()).map((r) => [r.version, r.rolloutPercent, r.yanked])).toEqual([["3.1.0", 60, true], ["3.0.0", 0, false]]);
    });

    test("put creates, then changes only what `change` holds", async () => {
      const { releases } = await open();
      const first = await releases.put(put("2.0.0", { notes: "first" }));
      const again = await releases.put({ create: rel("2.0.0", { notes: "ignored" }), change: { minAppVersion: "1.5.0" } });
      expect(again.id).toBe(first.id);
      expect(again).toMatchObject({ notes: "first", minAppVersion: "1.5.0", publishedAt: first.publishedAt });
      expect(await releases.list()).toHaveLength(1);
    });

    test("publish upserts assets by name atomically, keeps an operator's classification, reports replaced bytes", async () => {
      const { releases } = await open();
      const classification = { platform: "windows" as const, arch: "x64" as const, fileType: "exe" };
      const first = await releases.publish(put("1.0.0"), [
        { name: "a.exe", classification, fields: mirrored(SHA_A) },
        { name: "b.txt", classification: { platform: "" as const, arch: "" as const, fileType: "txt" }, fields: { sha256: "", size: null, mirrored: false, upstreamUrl: "https://example.invalid/b" } },
      ]);
      expect(first.replaced).toEqual([]);
      expect(first.release.assets.map((a) => [a.name, a.platform, a.sha256, a.mirrored, a.downloads])).toEqual([
        ["a.exe", "windows", SHA_A, true, 0],
        ["b.txt", "", "", false, 0],
      ]);
      const a = first.release.assets[0]!;
      await releases.updateAsset(a.id, { platform: "linux", classifiedByOperator: true });
      const second = await releases.publish(put("1.0.0"), [{ name: "a.exe", classification, fields: mirrored(SHA_B) }]);
      expect(second.replaced).toEqual([SHA_A]);
      const after = second.release.assets.find((x) => x.name === "a.exe")!;
      expect(after).toMatchObject({ id: a.id, platform: "linux", classifiedByOperator: true, sha256: SHA_B });
      expect(second.release.assets).toHaveLength(2);
      expect(await releases.isShaReferenced(SHA_A)).toBe(false);
      expect(await releases.isShaReferenced(SHA_B)).toBe(true);
    });

    test("putAsset adds or replaces one asset and names the bytes it stopped using", async () => {
      const { releases } = await open();
      const r = (await releases.create(rel("1.0.0")))!;
      const c = { platform: "" as const, arch: "" as const, fileType: "zip" };
      const added = await releases.putAsset(r.id, { name: "web-1.0.0.zip", classification: c, fields: mirrored(SHA_A, 5) });
      expect(added.replaced).toEqual([]);
      expect(added.asset).toMatchObject({ releaseId: r.id, name: "web-1.0.0.zip", size: 5, sha256: SHA_A });
      const same = await releases.putAsset(r.id, { name: "web-1.0.0.zip", classification: c, fields: mirrored(SHA_A, 5) });
      expect(same.replaced).toEqual([]);
      const replaced = await releases.putAsset(r.id, { name: "web-1.0.0.zip", classification: c, fields: { sha256: "", size: null, mirrored: false, upstreamUrl: "https://example.invalid/x" } });
      expect(replaced.replaced).toEqual([SHA_A]);
      expect(await releases.findAsset(r.id, "web-1.0.0.zip")).toEqual(replaced.asset);
      expect(await releases.getAsset(replaced.asset.id)).toEqual(replaced.asset);
      expect(await releases.findAsset(r.id, "nope")).toBeNull();
    });

    test("applyBatch creates and updates releases and assets in one step and says what it did", async () => {
      const { releases } = await open();
      const existing = (await releases.create(rel("1.0.0", { origin: "github", remoteId: 1 })))!;
      const { asset } = await releases.putAsset(existing.id, { name: "x.dmg", classification: {}, fields: { sha256: "", mirrorPending: true, remoteId: 11 } });
      const result = await releases.applyBatch([
        { version: "1.0.0", existingId: existing.id, create: null, update: { notes: "changed" }, assets: [{ existingId: asset.id, name: "x.dmg", fields: { remoteSize: 99 } }] },
        { version: "1.1.0", existingId: null, create: rel("1.1.0", { origin: "github", remoteId: 2 }), update: {}, assets: [{ existingId: null, name: "y.AppImage", fields: { mirrorPending: true, remoteId: 21 } }] },
      ]);
      expect(result).toEqual({ created: ["1.1.0"], updated: ["1.0.0"], assetsAdded: 1, assetsUpdated: 1 });
      expect((await releases.get("1.0.0"))!.notes).toBe("changed");
      expect((await releases.getAsset(asset.id))!.remoteSize).toBe(99);
      expect((await releases.get("1.1.0"))!.assets.map((a) => a.name)).toEqual(["y.AppImage"]);
      expect((await releases.pendingMirrorAssets()).map((a) => a.name)).toEqual(["x.dmg", "y.AppImage"]);
    });

    test("a failing batch changes nothing", async () => {
      const { releases } = await open();
      await releases.create(rel("1.0.0"));
      const before = await releases.list();
      await expect(
        releases.applyBatch([
          { version: "2.0.0", existingId: null, create: rel("2.0.0"), update: {}, assets: [] },
          { version: "1.0.0", existingId: null, create: rel("1.0.0"), update: {}, assets: [] }, // the version exists: refused
        ]),
      ).rejects.toThrow();
      expect(await releases.list()).toEqual(before);
    });

    test("list is newest first; delete takes the assets along and returns their digests", async () => {
      const { releases } = await open();
      const one = (await releases.publish(put("1.0.0"), [{ name: "a", classification: {}, fields: mirrored(SHA_A) }])).release;
      await releases.create(rel("2.0.0"));
      expect((await releases.list()).map((r) => r.version)).toEqual(["2.0.0", "1.0.0"]);
      expect(await releases.delete(one.id)).toEqual([SHA_A]);
      expect(await releases.getAsset(one.assets[0]!.id)).toBeNull();
      expect((await releases.list()).map((r) => r.version)).toEqual(["2.0.0"]);
    });

    test("an id is never handed out twice, even after a delete", async () => {
      // A download link names an asset by id: a reused id would hand an old link another file.
      const { releases } = await open();
      const r = (await releases.publish(put("1.0.0"), [{ name: "a", classification: {}, fields: mirrored(SHA_A) }])).release;
      const first = r.assets[0]!.id;
      await releases.deleteAsset(first);
      const { asset: second } = await releases.putAsset(r.id, { name: "b", classification: {}, fields: {} });
      expect(second.id).not.toBe(first);
      await releases.delete(r.id);
      const again = (await releases.publish(put("1.0.0"), [{ name: "a", classification: {}, fields: mirrored(SHA_A) }])).release;
      expect([first, second.id]).not.toContain(again.assets[0]!.id);
      expect(again.assets[0]!.id).toBeGreaterThan(second.id);
    });

    test("every committed write is reported as a change; reads are not", async () => {
      const { releases, changes } = await open();
      const start = changes();
      const r = (await releases.create(rel("1.0.0")))!;
      await releases.update(r.id, { notes: "x" });
      const { asset } = await releases.putAsset(r.id, { name: "a", classification: {}, fields: {} });
      await releases.updateAsset(asset.id, { size: 1 });
      await releases.deleteAsset(asset.id);
      await releases.delete(r.id);
      const writes = changes() - start;
      expect(writes).toBeGreaterThanOrEqual(6);
      await releases.list();
      await releases.get("1.0.0");
      expect(changes() - start).toBe(writes);
    });

    test("an asset keeps its signature text through publish, putAsset, updateAsset and a batch; none is null", async () => {
      const sigA = "untrusted comment: signature from minisign secret key\nRUQ=\ntrusted comment: t\nAA==\n";
      const { releases } = await open();
      const r = (await releases.publish(put("1.0.0"), [
        { name: "a.exe", classification: {}, fields: { ...mirrored(SHA_A), signature: sigA } },
        { name: "b.exe", classification: {}, fields: mirrored(SHA_B) },
      ])).release;
      const byName = (rel: ReleaseRecord | null, n: string) => rel!.assets.find((x) => x.name === n)!;
      expect(byName(r, "a.exe").signature).toBe(sigA);
      expect(byName(r, "b.exe").signature).toBeNull();
      // Re-publishing without a signature clears it (the new bytes are unsigned); with one, replaces it.
      const again = (await releases.publish(put("1.0.0"), [{ name: "a.exe", classification: {}, fields: { ...mirrored(SHA_B), signature: null } }])).release;
      expect(byName(again, "a.exe").signature).toBeNull();
      const { asset } = await releases.putAsset(r.id, { name: "c.exe", classification: {}, fields: { ...mirrored(SHA_A), signature: "x" } });
      expect(asset.signature).toBe("x");
      await releases.updateAsset(asset.id, { signature: sigA });
      expect((await releases.getAsset(asset.id))!.signature).toBe(sigA);
      await releases.applyBatch([{ version: "1.0.0", existingId: r.id, create: null, update: {}, assets: [{ existingId: null, name: "d.exe", fields: { signature: "d-sig" } }] }]);
      expect(byName(await releases.get("1.0.0"), "d.exe").signature).toBe("d-sig");
      expect(byName((await releases.list())[0]!, "c.exe").signature).toBe(sigA);
    });

    test("an asset keeps the updaters' digests (SHA-512, SHA-1) through publish, putAsset, updateAsset and a batch; unknown is \"\"", async () => {
      const { releases } = await open();
      const d512 = "z".repeat(86) + "==";
      const d1 = "1".repeat(40);
      const r = (await releases.publish(put("1.0.0"), [
        { name: "a.exe", classification: {}, fields: { ...mirrored(SHA_A), sha512: d512, sha1: d1 } },
        { name: "b.exe", classification: {}, fields: mirrored(SHA_B) },
      ])).release;
      const byName = (rel: ReleaseRecord | null, n: string) => rel!.assets.find((x) => x.name === n)!;
      expect(byName(r, "a.exe")).toMatchObject({ sha512: d512, sha1: d1 });
      expect(byName(r, "b.exe")).toMatchObject({ sha512: "", sha1: "" });
      const { asset } = await releases.putAsset(r.id, { name: "c.exe", classification: {}, fields: { ...mirrored(SHA_A), sha512: d512, sha1: d1 } });
      expect(asset).toMatchObject({ sha512: d512, sha1: d1 });
      await releases.updateAsset(asset.id, { sha512: "", sha1: "" });
      expect(await releases.getAsset(asset.id)).toMatchObject({ sha512: "", sha1: "" });
      await releases.applyBatch([{ version: "1.0.0", existingId: r.id, create: null, update: {}, assets: [{ existingId: null, name: "d.exe", fields: { sha512: d512, sha1: d1 } }] }]);
      expect(byName(await releases.get("1.0.0"), "d.exe")).toMatchObject({ sha512: d512, sha1: d1 });
      expect(byName((await releases.list())[0]!, "a.exe")).toMatchObject({ sha512: d512, sha1: d1 });
    });

    test("a synced asset keeps where its signature is fetched from through a batch and updateAsset; none is null", async () => {
      const { releases } = await open();
      const sigUrl = "https://github.com/o/r/releases/download/v1/a.exe.minisig";
      const sigApi = "https://api.github.com/repos/o/r/releases/assets/11";
      await releases.applyBatch([{
        version: "1.0.0",
        existingId: null,
        create: rel("1.0.0", { origin: "github", remoteId: 1 }),
        update: {},
        assets: [
          { existingId: null, name: "a.exe", fields: { remoteId: 10, mirrorPending: true, signatureUrl: sigUrl, signatureApiUrl: sigApi } },
          { existingId: null, name: "b.exe", fields: { remoteId: 20, mirrorPending: true } },
        ],
      }]);
      const r = (await releases.get("1.0.0"))!;
      const a = r.assets.find((x) => x.name === "a.exe")!;
      expect(a).toMatchObject({ signatureUrl: sigUrl, signatureApiUrl: sigApi, signature: null });
      expect(r.assets.find((x) => x.name === "b.exe")).toMatchObject({ signatureUrl: null, signatureApiUrl: null });
      expect((await releases.pendingMirrorAssets()).find((x) => x.id === a.id)).toMatchObject({ signatureUrl: sigUrl, signatureApiUrl: sigApi });
      // The signature removed upstream: the addresses go; the text stored with the mirrored bytes is another field.
      await releases.updateAsset(a.id, { signature: "text", signatureUrl: null, signatureApiUrl: null });
      expect(await releases.getAsset(a.id)).toMatchObject({ signature: "text", signatureUrl: null, signatureApiUrl: null });
      await releases.applyBatch([{ version: "1.0.0", existingId: r.id, create: null, update: {}, assets: [{ existingId: a.id, name: "a.exe", fields: { signatureApiUrl: sigApi } }] }]);
      expect((await releases.list())[0]!.assets.find((x) => x.id === a.id)).toMatchObject({ signature: "text", signatureUrl: null, signatureApiUrl: sigApi });
    });

    test("the sync lease: one holder at a time, taken over once expired, renewed by its holder, released only by it", async () => {
      const { releases } = await open();
      expect(await releases.acquireLease("sync", "a", 2000, 1000)).toBe(true);
      expect(await releases.acquireLease("sync", "b", 2500, 1500)).toBe(false);
      expect(await releases.acquireLease("sync", "a", 3000, 1500)).toBe(true);
      await releases.releaseLease("sync", "b");
      expect(await releases.acquireLease("sync", "b", 4000, 2000)).toBe(false);
      expect(await releases.acquireLease("sync", "b", 5000, 3000)).toBe(true); // a's lease ran out at 3000
      await releases.releaseLease("sync", "b");
      expect(await releases.acquireLease("sync", "a", 6000, 3001)).toBe(true);
    });

    test("the sync lease dies with its process: a holder of this host that no longer runs is taken over at once; a live one, or one of another host, is not", async () => {
      const { releases } = await open();
      const gone = Bun.spawn([process.execPath, "-e", ""]);
      await gone.exited;
      const now = Date.now();
      const until = now + 300_000;
      // A live holder of this host (this very process, under another owner name): respected until it expires.
      expect(await releases.acquireLease("sync", `${processTag()}-live`, until, now)).toBe(true);
      expect(await releases.acquireLease("sync", "taker", until, now)).toBe(false);
      await releases.releaseLease("sync", `${processTag()}-live`);
      // Another host's instance, whatever its pid: only its expiry frees the lease.
      expect(await releases.acquireLease("sync", `h000000000000-p${gone.pid}-other`, until, now)).toBe(true);
      expect(await releases.acquireLease("sync", "taker", until, now)).toBe(false);
      await releases.releaseLease("sync", `h000000000000-p${gone.pid}-other`);
      // A holder of this host that was killed: taken over at once, and the new holder is respected in turn.
      expect(await releases.acquireLease("sync", `${processTag(gone.pid)}-killed`, until, now)).toBe(true);
      expect(await releases.acquireLease("sync", "taker", until, now)).toBe(true);
      expect(await releases.acquireLease("sync", `${processTag(gone.pid)}-killed`, until, now)).toBe(false);
    });
  });

  describe(`DownloadRepository conformance: ${backend}`, () => {
    let fx: ReleaseRepositoryFixture | null = null;
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });
    const assetOf = async () => {
      fx = await make();
      const r = (await fx.releases.publish(put("1.0.0"), [{ name: "a.zip", classification: {}, fields: mirrored(SHA_A) }])).release;
      return { ...fx, assetId: r.assets[0]!.id, releaseId: r.id };
    };
    const key = (c: string) => c.repeat(64);

    test("a download counts once per key within its window, on the UTC day it was counted", async () => {
      const { downloads, releases, assetId } = await assetOf();
      const day = Date.parse("2026-03-01T12:00:00Z");
      // Racing requests of one client (one key): one wins.
      const counted = await Promise.all(Array.from({ length: 8 }, (_, i) => downloads.countDownload(key("1"), assetId, day + i, 600_000)));
      expect(counted.filter(Boolean)).toHaveLength(1);
      expect(await downloads.countDownload(key("1"), assetId, day + 599_000, 600_000)).toBe(false);
      // Another client's key counts; the same key counts again once its window is over.
      expect(await downloads.countDownload(key("2"), assetId, day + 1000, 600_000)).toBe(true);
      expect(await downloads.countDownload(key("1"), assetId, day + 86_400_000, 600_000)).toBe(true);
      expect(await downloads.downloadsByDay(assetId)).toEqual([
        { day: "2026-03-01", count: 2 },
        { day: "2026-03-02", count: 1 },
      ]);
      expect((await releases.getAsset(assetId))!.downloads).toBe(3);
    });

    test("purge forgets expired records in batches of at most the limit, not the live ones", async () => {
      const { downloads, assetId } = await assetOf();
      for (let i = 0; i < 7; i++) await downloads.countDownload(`${i}`.repeat(64), assetId, 1000 + i, 4000);
      await downloads.countDownload(key("9"), assetId, 9000, 4000);
      // Records 0..6 expire at 5000..5006; 9 at 13000.
      expect(await downloads.purgeTokens(6000, 3)).toBe(3);
      expect(await downloads.purgeTokens(6000, 3)).toBe(3);
      expect(await downloads.purgeTokens(6000, 3)).toBe(1);
      expect(await downloads.purgeTokens(6000, 3)).toBe(0);
      // Purged keys count again; the live one does not.
      expect(await downloads.countDownload(key("0"), assetId, 6000, 4000)).toBe(true);
      expect(await downloads.countDownload(key("9"), assetId, 10_000, 4000)).toBe(false);
    });

    test("deleting a release takes its counts along", async () => {
      const { downloads, releases, assetId, releaseId } = await assetOf();
      await downloads.countDownload(key("h"), assetId, 1000, 600_000);
      await releases.delete(releaseId);
      expect(await downloads.downloadsByDay(assetId)).toEqual([]);
    });
  });
}
