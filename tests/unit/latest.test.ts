import { describe, expect, test } from "bun:test";
import { classifyAsset } from "../../src/site/releases/rules/classify";
import {
  buildLatestDocument,
  buildLegacyManifest,
  parseLatestQuery,
  pickLatestFor,
  pickLatestRelease,
  rankReleases,
  type SiteContext,
} from "../../src/site/releases/rules/latest";
import type { Asset, Release } from "../../src/site/releases/release-repository";
import { AppError } from "../../src/errors";

const HEX = "ab".repeat(32);
const ctx: SiteContext = { baseUrl: "https://updates.example.com/", heartbeatIntervalSeconds: 60, onlineWindowSeconds: 300 };

let nextId = 100;
function asset(name: string, over: Partial<Asset> = {}): Asset {
  return {
    id: nextId++,
    releaseId: 1,
    name,
    ...classifyAsset(name),
    sha256: HEX,
    size: 1234,
    upstreamUrl: null,
    mirrored: true,
    downloads: 0,
    ...over,
  };
}
function release(version: string, assets: Asset[], over: Partial<Release> = {}): Release {
  return {
    id: nextId++,
    version,
    notes: `notes ${version}`,
    publishedAt: "2025-03-01T00:00:00.000Z",
    minAppVersion: "",
    prerelease: false,
    assets,
    ...over,
  };
}

function sample(): Release {
  return release("v1.2.3", [
    asset("Gantry-1.2.3-x64-setup.exe", { id: 1 }),
    asset("Gantry-1.2.3-x64.msi", { id: 2, mirrored: false, upstreamUrl: "https://github.com/o/r/releases/download/v1.2.3/x.msi", sha256: "" }),
    asset("Gantry-1.2.3-arm64.dmg", { id: 3, sha256: HEX.toUpperCase() }),
    asset("Gantry-1.2.3-x64.dmg", { id: 4 }),
    asset("Gantry-1.2.3-universal.dmg", { id: 5 }),
    asset("Gantry-1.2.3-x86_64.AppImage", { id: 6, mirrored: false, upstreamUrl: null, size: null }),
    asset("gantry_1.2.3_amd64.deb", { id: 7 }),
    asset("web-1.2.3.zip", { id: 8 }),
    asset("checksums.txt", { id: 9, sha256: "not-a-digest" }),
  ], { minAppVersion: "v1.0.0" });
}

describe("buildLatestDocument", () => {
  test("full document without filters", () => {
    const doc = buildLatestDocument(sample(), {}, ctx);
    expect(doc.schema).toBe("app.latest.v1");
    expect(doc.version).toBe("1.2.3");
    expect(doc.minAppVersion).toBe("1.0.0");
    expect(doc.publishedAt).toBe("2025-03-01T00:00:00.000Z");
    expect(doc.notes).toBe("notes v1.2.3");
    expect(doc.assets.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(doc.assets[0]).toEqual({
      id: 1,
      name: "Gantry-1.2.3-x64-setup.exe",
      platform: "windows",
      arch: "x64",
      fileType: "exe",
      sha256: `sha256:${HEX}`,
      size: 1234,
      source: "mirror",
      downloadUrl: "https://updates.example.com/api/v1/download/1",
      recommended: true,
    });
    const byId = new Map(doc.assets.map((a) => [a.id, a]));
    expect(byId.get(2)).toMatchObject({ source: "proxy", sha256: "", downloadUrl: "https://updates.example.com/api/v1/download/2", recommended: false });
    expect(byId.get(3)!.sha256).toBe(`sha256:${HEX}`); // lowercased
    // The AppImage has no bytes anywhere: unavailable, empty URL, and the deb is recommended instead.
    expect(byId.get(6)).toMatchObject({ source: "unavailable", downloadUrl: "", recommended: false, size: null });
    expect(byId.get(7)!.recommended).toBe(true);
    expect(byId.get(9)!.sha256).toBe("");
    expect(doc.assets.filter((a) => a.recommended).map((a) => a.id)).toEqual([1, 3, 4, 7, 8]);
  });

  test("download, manifest and heartbeat entries", () => {
    const doc = buildLatestDocument(sample(), {}, { ...ctx, heartbeatIntervalSeconds: 45, onlineWindowSeconds: 600 });
    expect(doc.download.urlTemplate).toBe("https://updates.example.com/api/v1/download/{assetId}");
    expect(doc.download.recommended).toEqual([
      { id: 1, name: "Gantry-1.2.3-x64-setup.exe", platform: "windows", arch: "x64", fileType: "exe", downloadUrl: "https://updates.example.com/api/v1/download/1" },
      { id: 3, name: "Gantry-1.2.3-arm64.dmg", platform: "macos", arch: "arm64", fileType: "dmg", downloadUrl: "https://updates.example.com/api/v1/download/3" },
      { id: 4, name: "Gantry-1.2.3-x64.dmg", platform: "macos", arch: "x64", fileType: "dmg", downloadUrl: "https://updates.example.com/api/v1/download/4" },
      { id: 7, name: "gantry_1.2.3_amd64.deb", platform: "linux", arch: "x64", fileType: "deb", downloadUrl: "https://updates.example.com/api/v1/download/7" },
      { id: 8, name: "web-1.2.3.zip", platform: "web", arch: "universal", fileType: "zip", downloadUrl: "https://updates.example.com/api/v1/download/8" },
    ]);
    expect(doc.manifest).toEqual({ url: "https://updates.example.com/update/latest.json" });
    expect(doc.heartbeat).toEqual({
      url: "https://updates.example.com/api/v1/client/heartbeat",
      method: "POST",
      clientIdHeader: "X-App-Client-ID",
      intervalSeconds: 45,
      onlineWindowSeconds: 600,
    });
  });

  const filters: Array<[string, Record<string, string>, number[]]> = [
    ["platform=windows", { platform: "windows" }, [1, 2]],
    ["platform=darwin", { platform: "darwin" }, [3, 4, 5]],
    ["platform=macos&arch=aarch64 keeps universal", { platform: "macos", arch: "aarch64" }, [3, 5]],
    ["arch=x86_64", { arch: "x86_64" }, [1, 2, 4, 5, 6, 7, 8]],
    ["arch=universal", { arch: "universal" }, [5, 8]],
    ["file_type=appimage", { file_type: "appimage" }, [6]],
    ["platform=linux&file_type=deb", { platform: "linux", file_type: "deb" }, [7]],
    ["platform=web", { platform: "web" }, [8]],
    ["platform=windows&file_type=dmg (nothing)", { platform: "windows", file_type: "dmg" }, []],
    ["empty values are no filter", { platform: "", arch: " ", file_type: "" }, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
  ];
  for (const [title, raw, ids] of filters) {
    test(`filter ${title}`, () => {
      const doc = buildLatestDocument(sample(), parseLatestQuery(raw), ctx);
      expect(doc.assets.map((a) => a.id)).toEqual(ids);
    });
  }

  test("a filter never changes which asset is recommended", () => {
    const doc = buildLatestDocument(sample(), parseLatestQuery({ file_type: "msi" }), ctx);
    expect(doc.assets.map((a) => [a.id, a.recommended])).toEqual([[2, false]]);
    expect(doc.download.recommended).toEqual([]);
  });

  test("no release: empty document that still carries the heartbeat settings", () => {
    const doc = buildLatestDocument(null, {}, ctx);
    expect(doc).toMatchObject({ schema: "app.latest.v1", version: "", publishedAt: "", notes: "", minAppVersion: "", assets: [] });
    expect(doc.download.recommended).toEqual([]);
    expect(doc.heartbeat.url).toBe("https://updates.example.com/api/v1/client/heartbeat");
  });

  test("base URL without a trailing slash and plain http on loopback", () => {
    const doc = buildLatestDocument(sample(), { platform: "web" }, { ...ctx, baseUrl: "http://127.0.0.1:8080" });
    expect(doc.assets[0].downloadUrl).toBe("http://127.0.0.1:8080/api/v1/download/8");
  });
});

describe("parseLatestQuery", () => {
  test("normalises aliases", () => {
    expect(parseLatestQuery({ platform: "Win32", arch: "AMD64", file_type: "APPIMAGE" })).toEqual({
      platform: "windows",
      arch: "x64",
      fileType: "AppImage",
    });
    expect(parseLatestQuery({})).toEqual({});
    expect(parseLatestQuery({ other: "x" })).toEqual({});
  });

  const bad: Array<[Record<string, unknown>, string]> = [
    [{ platform: "android" }, "platform"],
    [{ arch: "armv7l" }, "arch"],
    [{ file_type: "docx" }, "file_type"],
    [{ platform: ["windows", "macos"] }, "platform"],
  ];
  for (const [raw, param] of bad) {
    test(`400 for ${JSON.stringify(raw)}`, () => {
      let err: unknown;
      try {
        parseLatestQuery(raw);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).code).toBe("invalid_request");
      expect((err as AppError).param).toBe(param);
    });
  }
});

describe("pickLatestRelease", () => {
  const r = (version: string, over: Partial<Release> = {}) => release(version, [], over);

  test("highest version, not the newest date or the last inserted", () => {
    const list = [r("1.9.0", { publishedAt: "2025-06-01T00:00:00Z" }), r("1.10.0", { publishedAt: "2025-01-01T00:00:00Z" }), r("1.2.0")];
    expect(pickLatestRelease(list)?.version).toBe("1.10.0");
  });
  test("pre-releases (flag or suffix) only on request; invalid versions never", () => {
    const list = [r("1.0.0"), r("2.0.0-beta.1"), r("1.5.0", { prerelease: true }), r("nightly")];
    expect(pickLatestRelease(list)?.version).toBe("1.0.0");
    expect(pickLatestRelease(list, { includePrerelease: true })?.version).toBe("2.0.0-beta.1");
    expect(rankReleases(list, { includePrerelease: true }).map((x) => x.version)).toEqual(["2.0.0-beta.1", "1.5.0", "1.0.0"]);
  });
  test("equal versions: newer publish date, then higher id", () => {
    const a = r("v1.2", { id: 1, publishedAt: "2025-01-01T00:00:00Z" });
    const b = r("1.2.0", { id: 2, publishedAt: "2025-02-01T00:00:00Z" });
    const c = r("1.2.0.0", { id: 3, publishedAt: "2025-02-01T00:00:00Z" });
    expect(pickLatestRelease([a, b])?.id).toBe(2);
    expect(pickLatestRelease([c, b, a])?.id).toBe(3);
  });
  test("nothing eligible -> null", () => {
    expect(pickLatestRelease([])).toBeNull();
    expect(pickLatestRelease([r("1.0.0-rc.1")])).toBeNull();
  });
});

describe("pickLatestFor", () => {
  const releases = () => [
    release("1.4.0", [asset("Gantry-1.4.0-x64-setup.exe"), asset("Gantry-1.4.0-arm64.dmg", { mirrored: false, upstreamUrl: null })]),
    release("1.3.0", [asset("Gantry-1.3.0-arm64.dmg", { mirrored: false, upstreamUrl: "https://gh/x.dmg" }), asset("checksums.txt")]),
    release("1.2.0", [asset("Gantry-1.2.0-x86_64.AppImage"), asset("Gantry-1.2.0-universal.dmg")]),
    release("2.0.0-beta.1", [asset("Gantry-2.0.0-beta.1-x86_64.AppImage")]),
  ];
  test("no filter: the latest release, whatever its assets", () => {
    expect(pickLatestFor(releases(), {})?.version).toBe("1.4.0");
    expect(pickLatestFor([release("1.5.0", [])], {})?.version).toBe("1.5.0");
  });
  test("a filter: the newest release with a downloadable matching asset", () => {
    const pick = (raw: Record<string, string>) => pickLatestFor(releases(), parseLatestQuery(raw))?.version ?? null;
    expect(pick({ platform: "windows" })).toBe("1.4.0");
    // 1.4.0's dmg has no bytes anywhere (unavailable): skipped; 1.3.0's is proxied: counts.
    expect(pick({ platform: "macos" })).toBe("1.3.0");
    expect(pick({ platform: "macos", arch: "x64" })).toBe("1.2.0"); // the universal dmg answers x64
    expect(pick({ platform: "linux" })).toBe("1.2.0"); // never the pre-release
    expect(pick({ file_type: "txt" })).toBe("1.3.0");
    expect(pick({ platform: "web" })).toBeNull();
    expect(pickLatestFor(releases(), { platform: "linux" }, { includePrerelease: true })?.version).toBe("2.0.0-beta.1");
  });
});

describe("buildLegacyManifest", () => {
  test("the web zip of the latest release", () => {
    const m = buildLegacyManifest([sample(), release("1.2.2", [asset("web-1.2.2.zip")])], ctx);
    expect(m).toEqual({
      version: "1.2.3",
      name: "web-1.2.3.zip",
      url: "https://updates.example.com/api/v1/download/8",
      hash: HEX,
      sha256: `sha256:${HEX}`,
      size: 1234,
      minAppVersion: "1.0.0",
      notes: "notes v1.2.3",
      pubDate: "2025-03-01T00:00:00.000Z",
    });
  });

  test("falls back to the newest release that has a downloadable web zip", () => {
    const releases = [
      release("1.4.0", [asset("Gantry-1.4.0-x64-setup.exe")]), // desktop only
      release("1.3.0", [asset("web-1.3.0.zip", { mirrored: false, upstreamUrl: null })]), // no bytes
      release("1.2.0", [asset("web-1.2.0.zip", { sha256: "", mirrored: false, upstreamUrl: "https://gh/web.zip" })], { minAppVersion: "1.1" }),
      release("1.1.0", [asset("web-1.1.0.zip")]),
    ];
    const m = buildLegacyManifest(releases, ctx)!;
    expect(m.version).toBe("1.2.0");
    expect(m.name).toBe("web-1.2.0.zip");
    expect(m.hash).toBe("");
    expect(m.sha256).toBe("");
    expect(m.minAppVersion).toBe("1.1");
  });

  test("pre-releases are skipped unless asked for", () => {
    const releases = [release("2.0.0-beta", [asset("web-2.0.0-beta.zip")]), release("1.0.0", [asset("web-1.0.0.zip")])];
    expect(buildLegacyManifest(releases, ctx)!.version).toBe("1.0.0");
    expect(buildLegacyManifest(releases, ctx, { includePrerelease: true })!.version).toBe("2.0.0-beta");
  });

  test("null when no release has a web zip", () => {
    expect(buildLegacyManifest([], ctx)).toBeNull();
    expect(buildLegacyManifest([release("1.0.0", [asset("Gantry-1.0.0.dmg"), asset("bundle.zip")])], ctx)).toBeNull();
  });
});
