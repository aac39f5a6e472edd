/**
 * The pure parts of the updater feeds (issue 35): the shared offer rule (the rule of /api/v1/latest, with a
 * protocol's pick), strict SemVer spellings, and electron-updater's feed names, file choice and YAML.
 */
import { describe, expect, test } from "bun:test";
import { classifyAsset } from "../../src/site/releases/rules/classify";
import { chooseVariant, planLatest } from "../../src/site/releases/rules/latest";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";
import { buildElectronYml, channelTakesPrereleases, electronFiles, parseElectronFeedName } from "../../src/site/protocols/electron/rules/electron-feed";
import { chooseOffer, planOffer } from "../../src/site/protocols/rules/offer";
import { strictSemver } from "../../src/site/protocols/rules/semver";
import { parseVelopackFeedName, velopackPackageName, velopackPackages } from "../../src/site/protocols/velopack/rules/velopack-feed";
import { buildAppcast, sparkleArch, sparkleArchive } from "../../src/site/protocols/sparkle/rules/sparkle-feed";
import { buildSquirrelMacUpdate, parseSquirrelMacRequest, squirrelMacZip } from "../../src/site/protocols/squirrel/rules/squirrel-mac";
import { buildReleasesFile, parseSquirrelWindowsArch, squirrelPackages } from "../../src/site/protocols/squirrel/rules/squirrel-windows";
import { buildTauriStatic, buildTauriUpdate, bundleTypeOf, parseTauriRequest, tauriBundle } from "../../src/site/protocols/tauri/rules/tauri-feed";
import type { Asset, Release } from "../../src/site/releases/release-repository";

let nextId = 1;
function asset(name: string, over: Partial<Asset> = {}): Asset {
  return { id: nextId++, releaseId: 1, name, ...classifyAsset(name), sha256: "a".repeat(64), sha512: "c2hhNTEy", sha1: "b".repeat(40), size: 100, upstreamUrl: null, mirrored: true, downloads: 0, ...over };
}
function release(version: string, names: string[], over: Partial<Release> = {}): Release {
  return { id: nextId++, version, notes: "", publishedAt: "2026-11-01T00:00:00Z", minAppVersion: "", prerelease: false, assets: names.map((n) => asset(n)), ...over };
}

describe("planOffer: the rule of /api/v1/latest", () => {
  const releases = [
    release("1.0.0", ["App-1.0.0.AppImage"]),
    release("1.1.0", ["App-1.1.0.AppImage"], { rolloutPercent: 40 }),
    release("1.2.0", ["App-1.2.0.AppImage"], { yanked: true }),
    release("1.3.0", ["App-1.3.0.dmg"]), // nothing for Linux: passed over
    release("2.0.0-beta.1", ["App-2.0.0-beta.1.AppImage"]),
  ];
  const pickLinux = (r: Release) => r.assets.find((a) => a.platform === "linux") ?? null;

  test("base, staged and the choice per client agree with planLatest/chooseVariant for the same filter", () => {
    const plan = planOffer(releases, pickLinux);
    const latest = planLatest(releases, { platform: "linux" });
    expect(plan.base?.release.version).toBe(latest.base!.version);
    expect(plan.staged.map((o) => o.release.version)).toEqual(latest.staged.map((r) => r.version));
    for (let i = 0; i < 200; i++) {
      const id = `client-${i}`;
      expect(chooseOffer(plan, id)?.release.version).toBe(chooseVariant(latest, id)!.version);
      expect(chooseOffer(plan, id)?.release.version).toBe(rolloutBucket(id, "1.1.0") < 4000 ? "1.1.0" : "1.0.0");
    }
    expect(chooseOffer(plan, null)?.pick.name).toBe("App-1.0.0.AppImage");
  });

  test("pre-releases only when asked; nothing offerable gives no offer", () => {
    expect(planOffer(releases, pickLinux, { includePrerelease: true }).base?.release.version).toBe("2.0.0-beta.1");
    expect(chooseOffer(planOffer(releases, () => null), "x")).toBeNull();
  });
});

describe("strictSemver", () => {
  test("pads one or two parts, keeps pre-release and build, refuses four parts", () => {
    expect(strictSemver("v1.2")).toBe("1.2.0");
    expect(strictSemver("3")).toBe("3.0.0");
    expect(strictSemver("1.2.3-beta.1+7")).toBe("1.2.3-beta.1+7");
    expect(strictSemver("1.2.3.4")).toBeNull();
    expect(strictSemver("latest")).toBeNull();
  });
});

describe("electron-updater feeds", () => {
  test("feed names", () => {
    expect(parseElectronFeedName("latest.yml")).toEqual({ channel: "latest", platform: "windows", arch: null });
    expect(parseElectronFeedName("latest-mac.yml")).toEqual({ channel: "latest", platform: "macos", arch: null });
    expect(parseElectronFeedName("latest-linux.yml")).toEqual({ channel: "latest", platform: "linux", arch: "x64" });
    expect(parseElectronFeedName("beta-linux-arm64.yml")).toEqual({ channel: "beta", platform: "linux", arch: "arm64" });
    expect(parseElectronFeedName("latest-linux-ia32.yml")).toEqual({ channel: "latest", platform: "linux", arch: "x86" });
    for (const n of ["latest.yaml", "latest-win.yml", "Latest.yml", "latest-linux-armv7l.yml", "../latest.yml", ""]) expect(parseElectronFeedName(n)).toBeNull();
    expect(channelTakesPrereleases("latest")).toBe(false);
    expect(channelTakesPrereleases("beta")).toBe(true);
  });

  test("files: one NSIS exe (x64 setup first), every mac zip, the arch's AppImage/deb/rpm with the AppImage first; none without SHA-512 or bytes", () => {
    const r = release("1.2.0", [
      "App-1.2.0-arm64-setup.exe", "App-1.2.0.exe", "App Setup 1.2.0.exe", "App-1.2.0.msi",
      "App-1.2.0-mac.zip", "App-1.2.0-arm64-mac.zip", "App-1.2.0.dmg",
      "app_1.2.0_amd64.deb", "App-1.2.0.AppImage", "app-1.2.0.x86_64.rpm", "App-1.2.0-arm64.AppImage", "App-1.2.0.AppImage.blockmap",
    ]);
    const names = (f: ReturnType<typeof electronFiles>) => f?.map((a) => a.name) ?? null;
    expect(names(electronFiles(r, { channel: "latest", platform: "windows", arch: null }))).toEqual(["App Setup 1.2.0.exe"]);
    expect(names(electronFiles(r, { channel: "latest", platform: "macos", arch: null }))).toEqual(["App-1.2.0-mac.zip", "App-1.2.0-arm64-mac.zip"]);
    expect(names(electronFiles(r, { channel: "latest", platform: "linux", arch: "x64" }))).toEqual(["App-1.2.0.AppImage", "app_1.2.0_amd64.deb", "app-1.2.0.x86_64.rpm"]);
    expect(names(electronFiles(r, { channel: "latest", platform: "linux", arch: "arm64" }))).toEqual(["App-1.2.0-arm64.AppImage"]);
    const noDigest = release("1.3.0", ["App-1.3.0.AppImage"]);
    noDigest.assets[0].sha512 = "";
    expect(electronFiles(noDigest, { channel: "latest", platform: "linux", arch: "x64" })).toBeNull();
    const unavailable = release("1.3.0", ["App-1.3.0.AppImage"]);
    Object.assign(unavailable.assets[0], { mirrored: false, upstreamUrl: null });
    expect(electronFiles(unavailable, { channel: "latest", platform: "linux", arch: "x64" })).toBeNull();
    expect(electronFiles(release("1.2.3.4", ["App.AppImage"]), { channel: "latest", platform: "linux", arch: "x64" })).toBeNull();
  });

  test("YAML: strings quoted as JSON (valid YAML), stagingPercentage only when given", () => {
    const r = release("v1.2", ["App: 1.2.AppImage"], { notes: "line 1\nline: 2 # not a comment" });
    const files = electronFiles(r, { channel: "latest", platform: "linux", arch: "x64" })!;
    const yml = buildElectronYml(r, files, "https://u.example.com/");
    expect(yml).toContain('version: "1.2.0"');
    expect(yml).toContain(`  - url: "https://u.example.com/update/files/${files[0].id}/App%3A%201.2.AppImage"`);
    expect(yml).toContain('releaseNotes: "line 1\\nline: 2 # not a comment"');
    expect(yml).not.toContain("stagingPercentage");
    expect(buildElectronYml(r, files, "https://u.example.com", 25)).toEndWith("stagingPercentage: 25\n");
  });
});

describe("Tauri", () => {
  test("the request: targets, arches (others: no builds), versions, bundle types; a 400 for the unknown", () => {
    expect(parseTauriRequest("linux", "x86_64", "1.0.0", undefined)).toEqual({ platform: "linux", arch: "x64", currentVersion: "1.0.0", bundleType: null });
    expect(parseTauriRequest("darwin", "aarch64", "v2.0", "app")).toEqual({ platform: "macos", arch: "arm64", currentVersion: "v2.0", bundleType: "app" });
    expect(parseTauriRequest("windows", "i686", "1.0.0", "nsis").arch).toBe("x86");
    expect(parseTauriRequest("linux", "armv7", "1.0.0", undefined).arch).toBeNull();
    for (const [t, a, v, b, param] of [["beos", "x86_64", "1", undefined, "target"], ["linux", "mips", "1", undefined, "arch"], ["linux", "x86_64", "x", undefined, "current_version"], ["linux", "x86_64", "1", "msi", "bundle_type"]] as const) {
      expect(() => parseTauriRequest(t, a, v, b)).toThrow(expect.objectContaining({ code: "invalid_request", param }));
    }
  });

  test("bundle types from names", () => {
    const t = (name: string) => bundleTypeOf({ name, fileType: classifyAsset(name).fileType });
    expect(t("A_1.0.0_amd64.AppImage.tar.gz")).toBe("appimage");
    expect(t("A_1.0.0_amd64.AppImage")).toBe("appimage");
    expect(t("A.app.tar.gz")).toBe("app");
    expect(t("A_1.0.0_x64_en-US.msi.zip")).toBe("msi");
    expect(t("A_1.0.0_x64_en-US.msi")).toBe("msi");
    expect(t("A_1.0.0_x64-setup.nsis.zip")).toBe("nsis");
    expect(t("A_1.0.0_x64-setup.exe")).toBe("nsis");
    expect(t("A_1.0.0_amd64.deb")).toBe("deb");
    expect(t("A-1.0.0.x86_64.rpm")).toBe("rpm");
    for (const n of ["A_1.0.0_x64.exe", "A_1.0.0.dmg", "A-1.0.0-mac.zip", "A.tar.gz"]) expect(t(n)).toBeNull();
  });

  test("only signed bundles; the request's type, else AppImage, NSIS, app in order; the exact arch before universal", () => {
    const r = release("1.0.0", ["A_1.0.0_amd64.deb", "A_1.0.0_amd64.AppImage", "A_1.0.0_x64-setup.exe", "A_1.0.0_x64_en-US.msi", "A_universal.app.tar.gz", "A_aarch64.app.tar.gz", "A_1.0.0_arm64.AppImage"]);
    for (const a of r.assets) a.signature = `sig of ${a.name}`;
    r.assets.find((a) => a.name === "A_1.0.0_arm64.AppImage")!.signature = null;
    const pick = (p: "linux" | "windows" | "macos", arch: "x64" | "arm64", b: "deb" | "msi" | null = null) => tauriBundle(r, p, arch, b)?.name ?? null;
    expect(pick("linux", "x64")).toBe("A_1.0.0_amd64.AppImage");
    expect(pick("linux", "x64", "deb")).toBe("A_1.0.0_amd64.deb");
    expect(pick("linux", "arm64")).toBeNull(); // unsigned
    expect(pick("windows", "x64")).toBe("A_1.0.0_x64-setup.exe");
    expect(pick("windows", "x64", "msi")).toBe("A_1.0.0_x64_en-US.msi");
    expect(pick("macos", "arm64")).toBe("A_aarch64.app.tar.gz");
    expect(pick("macos", "x64")).toBe("A_universal.app.tar.gz");
    expect(tauriBundle(r, "linux", null, null)).toBeNull();
    const appimage = tauriBundle(r, "linux", "x64", null)!;
    expect(buildTauriUpdate(r, appimage, "https://u.example.com")).toEqual({
      version: "1.0.0", notes: "", pub_date: "2026-11-01T00:00:00Z",
      url: `https://u.example.com/update/files/${appimage.id}/A_1.0.0_amd64.AppImage`,
      signature: Buffer.from("sig of A_1.0.0_amd64.AppImage").toString("base64"),
    });
    const doc = buildTauriStatic(r, "https://u.example.com")!;
    expect(Object.keys(doc.platforms).sort()).toEqual([
      "darwin-aarch64", "darwin-aarch64-app", "darwin-x86_64", "darwin-x86_64-app",
      "linux-x86_64", "linux-x86_64-appimage", "linux-x86_64-deb", "windows-x86_64", "windows-x86_64-msi", "windows-x86_64-nsis",
    ]);
    expect(buildTauriStatic(release("1.0.0", ["A_1.0.0_amd64.AppImage"]), "https://u.example.com")).toBeNull(); // unsigned only
  });
});

describe("Squirrel", () => {
  test("Squirrel.Windows: the full package (required) and its delta with SHA-1, for the arch; RELEASES lines", () => {
    const r = release("1.1.0", ["App-1.1.0-full.nupkg", "App-1.1.0-delta.nupkg", "App-1.1.0-x64-setup.exe"]);
    const pkgs = squirrelPackages(r, "x64")!;
    expect(pkgs.map((a) => a.name)).toEqual(["App-1.1.0-full.nupkg", "App-1.1.0-delta.nupkg"]);
    expect(buildReleasesFile(pkgs, "https://u.example.com/")).toBe(
      `${"B".repeat(40)} https://u.example.com/update/files/${pkgs[0].id}/App-1.1.0-full.nupkg 100\r\n${"B".repeat(40)} https://u.example.com/update/files/${pkgs[1].id}/App-1.1.0-delta.nupkg 100\r\n`,
    );
    expect(squirrelPackages(r, "arm64")).toBeNull();
    expect(squirrelPackages(release("1.1.0", ["App-1.1.0-delta.nupkg"]), "x64")).toBeNull();
    const noSha1 = release("1.1.0", ["App-1.1.0-full.nupkg"]);
    noSha1.assets[0].sha1 = "";
    expect(squirrelPackages(noSha1, "x64")).toBeNull();
    expect(parseSquirrelWindowsArch("ia32")).toBe("x86");
    expect(() => parseSquirrelWindowsArch("universal")).toThrow(expect.objectContaining({ param: "arch" }));
  });

  test("Squirrel.Mac: the zip of the arch, else universal; the answer", () => {
    const r = release("1.1.0", ["App-1.1.0-mac.zip", "App-1.1.0-universal-mac.zip", "App-1.1.0-arm64.dmg", "App-1.1.0-mac.zip.blockmap"]);
    expect(squirrelMacZip(r, "x64")?.name).toBe("App-1.1.0-mac.zip");
    expect(squirrelMacZip(r, "arm64")?.name).toBe("App-1.1.0-universal-mac.zip");
    expect(squirrelMacZip(release("1.1.0", ["App-1.1.0-arm64.dmg"]), "arm64")).toBeNull();
    const zip = squirrelMacZip(r, "x64")!;
    expect(buildSquirrelMacUpdate({ ...r, version: "v1.1.0", notes: "n" }, zip, "https://u.example.com")).toEqual({
      url: `https://u.example.com/update/files/${zip.id}/App-1.1.0-mac.zip`, name: "1.1.0", notes: "n", pub_date: "2026-11-01T00:00:00Z",
    });
    expect(parseSquirrelMacRequest("aarch64", "1.0")).toEqual({ arch: "arm64", current: "1.0" });
    expect(() => parseSquirrelMacRequest("ia32", "1.0")).toThrow(expect.objectContaining({ param: "arch" }));
    expect(() => parseSquirrelMacRequest("x64", "one")).toThrow(expect.objectContaining({ param: "version" }));
  });
});

describe("Sparkle", () => {
  test("arch values, archive choice (zip, dmg, tarball, pkg; arch, universal), no item when nothing is offered", () => {
    expect(sparkleArch("")).toBeNull();
    expect(sparkleArch("x86_64")).toBe("x64");
    expect(sparkleArch("ARM64")).toBe("arm64");
    expect(sparkleArch("ppc")).toBeUndefined();
    const r = release("2.0.0", ["A-2.0.0-arm64.dmg", "A-2.0.0-arm64-mac.zip", "A_universal.app.tar.gz", "A-2.0.0.pkg", "A-2.0.0-arm64-mac.zip.blockmap"]);
    expect(sparkleArchive(r, "arm64")?.name).toBe("A-2.0.0-arm64-mac.zip");
    expect(sparkleArchive(r, "x64")?.name).toBe("A-2.0.0.pkg"); // x64 by the default of an arch-less name, before universal
    expect(sparkleArchive(r, null)?.name).toBe("A_universal.app.tar.gz");
    expect(sparkleArchive(release("2.0.0", ["A-2.0.0-x64-setup.exe"]), null)).toBeNull();
    expect(buildAppcast(null, "https://u.example.com", "T & Co")).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:sparkle="http://www.andymatuschak.org/xml-namespaces/sparkle" xmlns:dc="http://purl.org/dc/elements/1.1/">\n  <channel>\n    <title>T &amp; Co</title>\n  </channel>\n</rss>\n',
    );
  });

  test("notes are escaped, characters XML cannot carry dropped", () => {
    const r = release("2.0.0", ["A-2.0.0-mac.zip"], { notes: 'a "b" <c> \u0001 d\'' });
    const xml = buildAppcast({ release: r, archive: r.assets[0], edSignature: null }, "https://u.example.com", "T");
    expect(xml).toContain("<description>a &quot;b&quot; &lt;c&gt;  d&apos;</description>");
    expect(xml).not.toContain("edSignature");
  });
});

describe("Velopack", () => {
  test("feed names, package names read with the release's version, packages per channel", () => {
    expect(parseVelopackFeedName("releases.linux.json")).toBe("linux");
    expect(parseVelopackFeedName("releases.win-beta.json")).toBe("win-beta");
    for (const n of ["releases.json", "releases..json", "RELEASES", "releases.a/b.json"]) expect(parseVelopackFeedName(n)).toBeNull();
    expect(velopackPackageName("MyApp-1.2.0-linux-full.nupkg", "1.2.0")).toEqual({ id: "MyApp", channel: "linux" });
    expect(velopackPackageName("My-App-1.2.0-full.nupkg", "v1.2.0")).toEqual({ id: "My-App", channel: "win" });
    expect(velopackPackageName("MyApp-1.2.0-beta-osx-delta.nupkg", "1.2.0-beta")).toEqual({ id: "MyApp", channel: "osx" });
    expect(velopackPackageName("MyApp-1.3.0-full.nupkg", "1.2.0")).toBeNull();
    const r = release("1.2.0", ["MyApp-1.2.0-linux-full.nupkg", "MyApp-1.2.0-linux-delta.nupkg", "MyApp-1.2.0-full.nupkg"]);
    expect(velopackPackages(r, "linux")!.map((a) => a.name)).toEqual(["MyApp-1.2.0-linux-full.nupkg", "MyApp-1.2.0-linux-delta.nupkg"]);
    expect(velopackPackages(r, "win")!.map((a) => a.name)).toEqual(["MyApp-1.2.0-full.nupkg"]);
    expect(velopackPackages(r, "osx")).toBeNull();
  });
});
