import { describe, expect, test } from "bun:test";
import {
  assetSource,
  classifyAsset,
  innerFileType,
  markRecommended,
  nupkgKind,
  normalizeArch,
  normalizeFileType,
  normalizePlatform,
  pickWebZip,
} from "../../src/site/releases/rules/classify";
import type { Asset } from "../../src/site/releases/release-repository";

describe("classifyAsset", () => {
  const table: Array<[string, string, string, string]> = [
    // name, platform, arch, fileType
    ["Gantry-1.2.3-x64-setup.exe", "windows", "x64", "exe"],
    ["Gantry-1.2.3-x64.exe", "windows", "x64", "exe"],
    ["Gantry-1.2.3-arm64-setup.exe", "windows", "arm64", "exe"],
    ["Gantry-1.2.3-ia32.exe", "windows", "x86", "exe"],
    ["Gantry Setup 1.2.3.exe", "windows", "x64", "exe"], // no arch token: x64 default
    ["Gantry_1.2.3_x64_en-US.msi", "windows", "x64", "msi"],
    ["Gantry-1.2.3.MSIX", "windows", "x64", "msix"],
    ["Gantry-1.2.3-arm64.dmg", "macos", "arm64", "dmg"],
    ["Gantry_1.2.3_x64.dmg", "macos", "x64", "dmg"],
    ["Gantry_1.2.3_aarch64.dmg", "macos", "arm64", "dmg"],
    ["Gantry-1.2.3-universal.dmg", "macos", "universal", "dmg"],
    ["Gantry-1.2.3.dmg", "macos", "x64", "dmg"], // electron-builder's unsuffixed x64 build
    ["Gantry-1.2.3.pkg", "macos", "x64", "pkg"],
    ["Gantry-1.2.3-mac-arm64.zip", "macos", "arm64", "zip"],
    ["Gantry-1.2.3-mac.zip", "macos", "x64", "zip"],
    ["Gantry-darwin-arm64-1.2.3.zip", "macos", "arm64", "zip"],
    ["Gantry.app.tar.gz", "macos", "x64", "tar.gz"],
    ["Gantry-1.2.3-x86_64.AppImage", "linux", "x64", "AppImage"],
    ["Gantry-1.2.3.appimage", "linux", "x64", "AppImage"],
    ["Gantry-1.2.3-arm64.AppImage", "linux", "arm64", "AppImage"],
    ["gantry_1.2.3_amd64.deb", "linux", "x64", "deb"],
    ["gantry_1.2.3_arm64.deb", "linux", "arm64", "deb"],
    ["gantry_1.2.3_armhf.deb", "linux", "", "deb"], // foreign arch: no x64 default
    ["gantry-1.2.3.x86_64.rpm", "linux", "x64", "rpm"],
    ["gantry-1.2.3.aarch64.rpm", "linux", "arm64", "rpm"],
    ["gantry-1.2.3-linux-x64.tar.gz", "linux", "x64", "tar.gz"],
    ["Gantry-1.2.3-win-x64.zip", "windows", "x64", "zip"],
    ["web-1.2.3.zip", "web", "universal", "zip"],
    ["WEB-1.2.3.zip", "web", "universal", "zip"],
    ["Gantry-web-1.2.3.zip", "", "", "zip"], // only `web-*.zip` is a web bundle
    ["web-1.2.3.tar.gz", "", "", "tar.gz"],
    ["Gantry-1.2.3.tar.gz", "", "", "tar.gz"], // source archive
    ["Gantry-1.2.3.zip", "", "", "zip"],
    ["checksums.txt", "", "", "txt"],
    ["latest-mac.yml", "", "", "yml"],
    // Tauri updater bundles: the wrapped type names the platform; the file type stays the archive's.
    ["MyApp_2.0.0_amd64.AppImage.tar.gz", "linux", "x64", "tar.gz"],
    ["MyApp_2.0.0_aarch64.AppImage.tar.gz", "linux", "arm64", "tar.gz"],
    ["MyApp.app.tar.gz", "macos", "x64", "tar.gz"],
    ["MyApp_2.0.0_aarch64.app.tar.gz", "macos", "arm64", "tar.gz"],
    ["MyApp_universal.app.tar.gz", "macos", "universal", "tar.gz"],
    ["MyApp_2.0.0_x64_en-US.msi.zip", "windows", "x64", "zip"],
    ["MyApp_2.0.0_x64-setup.nsis.zip", "windows", "x64", "zip"],
    ["MyApp_2.0.0_arm64-setup.NSIS.ZIP", "windows", "arm64", "zip"],
    // electron-builder and Squirrel names
    ["MyApp-Setup-1.2.3.exe", "windows", "x64", "exe"],
    ["MyApp-1.2.3-mac.zip", "macos", "x64", "zip"],
    ["MyApp-1.2.3-arm64-mac.zip", "macos", "arm64", "zip"],
    ["MyApp-1.2.3-full.nupkg", "windows", "x64", "nupkg"],
    ["MyApp-1.2.3-delta.nupkg", "windows", "x64", "nupkg"],
    // a blockmap sits with the file it maps
    ["Gantry-1.2.3-x64-setup.exe.blockmap", "windows", "x64", "blockmap"],
    ["MyApp-Setup-1.2.3.exe.blockmap", "windows", "x64", "blockmap"],
    ["MyApp-1.2.3-arm64-mac.zip.blockmap", "macos", "arm64", "blockmap"],
    ["MyApp-1.2.3.AppImage.blockmap", "linux", "x64", "blockmap"],
    ["notes.txt.blockmap", "", "", "blockmap"],
    ["Gantry-1.2.3", "", "", ""],
    ["README", "", "", ""],
  ];
  for (const [name, platform, arch, fileType] of table) {
    test(name, () => {
      expect(classifyAsset(name)).toEqual({ platform, arch, fileType } as never);
    });
  }
});

describe("updater bundle names", () => {
  test("innerFileType: the type a bundle wraps, null for anything else", () => {
    expect(innerFileType("MyApp_2.0.0_amd64.AppImage.tar.gz")).toBe("AppImage");
    expect(innerFileType("MyApp.app.tar.gz")).toBe("app");
    expect(innerFileType("MyApp.app.zip")).toBe("app");
    expect(innerFileType("MyApp_2.0.0_x64_en-US.msi.zip")).toBe("msi");
    expect(innerFileType("MyApp_2.0.0_x64-setup.nsis.zip")).toBe("nsis");
    for (const n of ["MyApp-1.2.3.AppImage", "MyApp-1.2.3.zip", "MyApp-1.2.3-mac.zip", "app.tar.gz", "MyApp.docx.zip"]) expect(innerFileType(n)).toBeNull();
  });
  test("nupkgKind: full, delta, or neither", () => {
    expect(nupkgKind("MyApp-1.2.3-full.nupkg")).toBe("full");
    expect(nupkgKind("MyApp-1.2.3-DELTA.nupkg")).toBe("delta");
    expect(nupkgKind("MyApp-1.2.3.nupkg")).toBeNull();
    expect(nupkgKind("MyApp-1.2.3-full.zip")).toBeNull();
  });
});

describe("query normalisation", () => {
  test("platform aliases", () => {
    for (const v of ["win", "Windows", "win32", " WIN64 "]) expect(normalizePlatform(v)).toBe("windows");
    for (const v of ["mac", "macOS", "darwin", "osx"]) expect(normalizePlatform(v)).toBe("macos");
    expect(normalizePlatform("linux")).toBe("linux");
    expect(normalizePlatform("web")).toBe("web");
    for (const v of ["", "android", "ios", "windowsx"]) expect(normalizePlatform(v)).toBeNull();
  });
  test("arch aliases", () => {
    for (const v of ["x64", "x86_64", "AMD64", "x86-64"]) expect(normalizeArch(v)).toBe("x64");
    for (const v of ["arm64", "aarch64", "ARM64"]) expect(normalizeArch(v)).toBe("arm64");
    for (const v of ["x86", "ia32", "i386", "i686"]) expect(normalizeArch(v)).toBe("x86");
    expect(normalizeArch("universal")).toBe("universal");
    for (const v of ["", "armv7l", "mips", "64"]) expect(normalizeArch(v)).toBeNull();
  });
  test("file types take their canonical spelling", () => {
    expect(normalizeFileType("appimage")).toBe("AppImage");
    expect(normalizeFileType("APPIMAGE")).toBe("AppImage");
    expect(normalizeFileType(".EXE")).toBe("exe");
    expect(normalizeFileType("TAR.GZ")).toBe("tar.gz");
    expect(normalizeFileType("dmg")).toBe("dmg");
    for (const v of ["", "gz", "exe.zip", "docx"]) expect(normalizeFileType(v)).toBeNull();
  });
});

let nextId = 1;
function asset(name: string, over: Partial<Asset> = {}): Asset {
  return {
    id: nextId++,
    releaseId: 1,
    name,
    ...classifyAsset(name),
    sha256: "",
    size: 1000,
    upstreamUrl: null,
    mirrored: true,
    downloads: 0,
    ...over,
  };
}
const recommendedNames = (assets: Asset[]) =>
  markRecommended(assets)
    .filter((a) => a.recommended)
    .map((a) => a.name)
    .sort();

describe("assetSource", () => {
  test("mirror beats upstream; upstream alone is proxied; neither is unavailable", () => {
    expect(assetSource({ mirrored: true, upstreamUrl: "https://x" })).toBe("mirror");
    expect(assetSource({ mirrored: true, upstreamUrl: null })).toBe("mirror");
    expect(assetSource({ mirrored: false, upstreamUrl: "https://x" })).toBe("proxy");
    expect(assetSource({ mirrored: false, upstreamUrl: "" })).toBe("unavailable");
    expect(assetSource({ mirrored: false, upstreamUrl: null })).toBe("unavailable");
  });
});

describe("markRecommended", () => {
  const full = [
    "Gantry-1.2.3-x64-setup.exe",
    "Gantry-1.2.3-x64.exe",
    "Gantry-1.2.3-arm64-setup.exe",
    "Gantry-1.2.3-x64.msi",
    "Gantry-1.2.3-arm64.dmg",
    "Gantry-1.2.3-x64.dmg",
    "Gantry-1.2.3-universal.dmg",
    "Gantry-1.2.3-mac-arm64.zip",
    "Gantry-1.2.3-x86_64.AppImage",
    "gantry_1.2.3_amd64.deb",
    "gantry-1.2.3.x86_64.rpm",
    "gantry_1.2.3_arm64.deb",
    "web-1.2.3.zip",
    "Gantry-1.2.3.tar.gz",
    "checksums.txt",
  ];

  test("full release: one windows x64 setup, one DMG per arch, AppImage / deb per arch, the web zip", () => {
    expect(recommendedNames(full.map((n) => asset(n)))).toEqual([
      "Gantry-1.2.3-arm64.dmg",
      "Gantry-1.2.3-x64-setup.exe",
      "Gantry-1.2.3-x64.dmg",
      "Gantry-1.2.3-x86_64.AppImage",
      "gantry_1.2.3_arm64.deb", // no arm64 AppImage, so the deb
      "web-1.2.3.zip",
    ]);
  });

  test("keeps input order and every asset field", () => {
    const input = full.map((n) => asset(n));
    const out = markRecommended(input);
    expect(out.map((a) => a.id)).toEqual(input.map((a) => a.id));
    expect(out[0]).toEqual({ ...input[0], recommended: true });
  });

  const cases: Array<[string, string[], string[]]> = [
    ["windows: no x64-setup -> x64 exe with a setup token", ["Gantry Setup 1.2.3.exe", "Gantry-1.2.3-x64.exe", "Gantry-1.2.3-x64.msi"], ["Gantry Setup 1.2.3.exe"]],
    ["windows: no setup -> any x64 exe", ["Gantry-1.2.3-x64.exe", "Gantry-1.2.3-x64.msi"], ["Gantry-1.2.3-x64.exe"]],
    ["windows: no exe -> msi", ["Gantry-1.2.3-x64.msi", "Gantry-1.2.3-x64.msix"], ["Gantry-1.2.3-x64.msi"]],
    ["windows: arm64 only -> nothing (the spec recommends x64 only)", ["Gantry-1.2.3-arm64-setup.exe"], []],
    ["macos: only universal -> recommended once", ["Gantry-1.2.3-universal.dmg"], ["Gantry-1.2.3-universal.dmg"]],
    ["macos: universal fills the missing arch", ["Gantry-1.2.3-arm64.dmg", "Gantry-1.2.3-universal.dmg"], ["Gantry-1.2.3-arm64.dmg", "Gantry-1.2.3-universal.dmg"]],
    ["macos: zips and pkgs are never recommended", ["Gantry-1.2.3-mac-arm64.zip", "Gantry-1.2.3.pkg"], []],
    ["linux: AppImage beats deb and rpm", ["gantry_1.2.3_amd64.deb", "Gantry-1.2.3-x86_64.AppImage", "gantry-1.2.3.x86_64.rpm"], ["Gantry-1.2.3-x86_64.AppImage"]],
    ["linux: rpm alone is not recommended", ["gantry-1.2.3.x86_64.rpm"], []],
    ["linux: AppImage per arch", ["Gantry-1.2.3-x86_64.AppImage", "Gantry-1.2.3-arm64.AppImage"], ["Gantry-1.2.3-arm64.AppImage", "Gantry-1.2.3-x86_64.AppImage"]],
    ["web: only web-*.zip, and the plain one of them", ["web-1.2.3-debug.zip", "web-1.2.3.zip", "Gantry-web.zip"], ["web-1.2.3.zip"]],
    ["ties: shortest name, then name order", ["Gantry-1.2.3-x64-b.dmg", "Gantry-1.2.3-x64-a.dmg", "Gantry-1.2.3-x64-long.dmg"], ["Gantry-1.2.3-x64-a.dmg"]],
    ["nothing classifiable", ["checksums.txt", "Gantry-1.2.3.tar.gz"], []],
  ];
  for (const [title, names, want] of cases) {
    test(title, () => expect(recommendedNames(names.map((n) => asset(n)))).toEqual(want));
  }

  test("an unavailable asset is skipped for the next candidate", () => {
    const assets = [
      asset("Gantry-1.2.3-x64-setup.exe", { mirrored: false, upstreamUrl: null }),
      asset("Gantry-1.2.3-x64.msi"),
      asset("Gantry-1.2.3-arm64.dmg", { mirrored: false, upstreamUrl: "" }),
      asset("Gantry-1.2.3-universal.dmg", { mirrored: false, upstreamUrl: "https://gh/x.dmg" }),
    ];
    expect(recommendedNames(assets)).toEqual(["Gantry-1.2.3-universal.dmg", "Gantry-1.2.3-x64.msi"]);
  });

  test("operator overrides win over the file name", () => {
    const assets = [
      asset("Gantry-1.2.3-x64-setup.exe", { arch: "arm64" }),
      asset("installer.exe", { platform: "windows", arch: "x64" }),
      asset("bundle.zip", { platform: "web", arch: "universal" }), // web, but not web-*.zip
    ];
    expect(recommendedNames(assets)).toEqual(["installer.exe"]);
  });

  test("pickWebZip ignores unavailable zips", () => {
    const a = asset("web-1.0.0.zip", { mirrored: false, upstreamUrl: null });
    const b = asset("web-1.0.1.zip");
    expect(pickWebZip([a, b])?.name).toBe("web-1.0.1.zip");
    expect(pickWebZip([a])).toBeUndefined();
  });
});
