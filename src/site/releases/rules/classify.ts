/**
 * File name -> platform, arch, file type; query value normalisation; recommendation rules.
 * The operator may override a stored classification, so the rules read the asset's fields, not its name,
 * except where the spec names a file pattern (`x64-setup.exe`, `web-*.zip`).
 */
import type { Arch, Asset, AssetSource, AssetWithRecommendation, Platform } from "./release-types";

/** Canonical spellings; lookups are case-insensitive. Multi-part extensions are listed first on purpose. */
const MULTI_PART_TYPES = ["tar.gz", "tar.xz", "tar.bz2", "tar.zst"];
const SINGLE_TYPES = [
  "exe", "msi", "msix", "msixbundle", "appx", "appxbundle", "nupkg",
  "dmg", "pkg",
  "AppImage", "deb", "rpm", "snap", "flatpak",
  "zip", "7z", "tgz",
  "apk", "aab", "ipa",
  "blockmap", "yml", "yaml", "json", "xml", "txt", "md", "sig", "asc", "sha256", "sha512",
];
export const KNOWN_FILE_TYPES: readonly string[] = [...MULTI_PART_TYPES, ...SINGLE_TYPES];
const CANONICAL_TYPE = new Map(KNOWN_FILE_TYPES.map((t) => [t.toLowerCase(), t]));

const WINDOWS_TYPES = new Set(["exe", "msi", "msix", "msixbundle", "appx", "appxbundle", "nupkg"]);
const MACOS_TYPES = new Set(["dmg", "pkg"]);
const LINUX_TYPES = new Set(["AppImage", "deb", "rpm", "snap", "flatpak"]);
/** Archives carry no platform of their own; the type inside them or a token in the name decides. */
const ARCHIVE_TYPES = new Set(["zip", "7z", "tgz", ...MULTI_PART_TYPES]);

/**
 * Updater bundles wrap an installer or an app in an archive (Tauri: `.AppImage.tar.gz`, `.app.tar.gz`, `.msi.zip`,
 * `.nsis.zip`): the wrapped type is what names the platform. Keys are lowercase; values are the canonical spelling.
 */
const INNER_TYPES: Record<string, { type: string; platform: Platform }> = {
  appimage: { type: "AppImage", platform: "linux" },
  app: { type: "app", platform: "macos" },
  msi: { type: "msi", platform: "windows" },
  nsis: { type: "nsis", platform: "windows" },
  exe: { type: "exe", platform: "windows" },
  dmg: { type: "dmg", platform: "macos" },
};

const ARCH_ALIASES: Record<string, Arch> = {
  x64: "x64", x86_64: "x64", "x86-64": "x64", amd64: "x64",
  arm64: "arm64", aarch64: "arm64",
  x86: "x86", ia32: "x86", i386: "x86", i686: "x86",
  universal: "universal",
};
/** Arches outside our value set: their presence must stop the x64 default, or an armv7l .deb would pose as x64. */
const FOREIGN_ARCH_TOKENS = new Set([
  "arm", "armv7", "armv7l", "armv7hl", "armhf", "armel", "ppc64le", "ppc64el", "s390x",
  "riscv64", "loong64", "loongarch64", "mips64el", "noarch",
]);

const PLATFORM_ALIASES: Record<string, Platform> = {
  win: "windows", windows: "windows", win32: "windows", win64: "windows",
  mac: "macos", macos: "macos", macosx: "macos", darwin: "macos", osx: "macos",
  linux: "linux",
  web: "web",
};

export function normalizePlatform(value: string): Platform | null {
  return PLATFORM_ALIASES[value.trim().toLowerCase()] ?? null;
}

export function normalizeArch(value: string): Arch | null {
  return ARCH_ALIASES[value.trim().toLowerCase()] ?? null;
}

/** `appimage` -> `AppImage`, `.EXE` -> `exe`; null when the type is not one we know. */
export function normalizeFileType(value: string): string | null {
  return CANONICAL_TYPE.get(value.trim().replace(/^\./, "").toLowerCase()) ?? null;
}

/** Splits off the extension; a purely numeric tail (`Gantry-1.2.3`) is part of the version, not an extension. */
function splitExtension(name: string): { base: string; fileType: string } {
  const lower = name.toLowerCase();
  for (const t of MULTI_PART_TYPES) {
    if (lower.endsWith(`.${t}`)) return { base: name.slice(0, -(t.length + 1)), fileType: t };
  }
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return { base: name, fileType: "" };
  const ext = name.slice(dot + 1);
  const known = CANONICAL_TYPE.get(ext.toLowerCase());
  if (known) return { base: name.slice(0, dot), fileType: known };
  if (/^[A-Za-z][A-Za-z0-9]{0,9}$/.test(ext)) return { base: name.slice(0, dot), fileType: ext.toLowerCase() };
  return { base: name, fileType: "" };
}

/** `x86_64` would be cut in two by the `_` separator, so it is rewritten before splitting. */
function tokens(base: string): string[] {
  return base
    .toLowerCase()
    .replace(/x86[-_]64/g, "x64")
    .split(/[\s\-_.+()[\]]+/)
    .filter((t) => t.length > 0);
}

/**
 * The type an updater bundle wraps (`MyApp_2.0.0_amd64.AppImage.tar.gz` -> `AppImage`, `MyApp.app.tar.gz` ->
 * `app`, `MyApp_2.0.0_x64-setup.nsis.zip` -> `nsis`), or null when the file is no archive around a known type.
 */
export function innerFileType(name: string): string | null {
  const { base, fileType } = splitExtension(name.trim());
  if (!ARCHIVE_TYPES.has(fileType)) return null;
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return null;
  return INNER_TYPES[base.slice(dot + 1).toLowerCase()]?.type ?? null;
}

/** Squirrel's package kind: `MyApp-1.2.3-full.nupkg` is a whole release, `-delta.nupkg` the change from the previous one. */
export function nupkgKind(name: string): "full" | "delta" | null {
  const m = /-(full|delta)\.nupkg$/i.exec(name.trim());
  return m ? (m[1].toLowerCase() as "full" | "delta") : null;
}

export function isWebZipName(name: string): boolean {
  return /^web-.+\.zip$/i.test(name);
}

/**
 * Decisions where the issue is silent:
 * - No arch token: windows, linux and macos default to `x64` (electron-builder omits the arch for x64 builds,
 *   e.g. `Gantry-1.2.3.dmg` next to `Gantry-1.2.3-arm64.dmg`; update.electronjs.org assumes the same).
 * - A web bundle is `universal`: it runs anywhere, and an `arch` filter keeps universal assets.
 * - An arch outside our set (`armv7l`, `noarch`, ...) gives arch "" rather than a wrong default.
 * - An archive around an installer or app (`.AppImage.tar.gz`, `.app.tar.gz`, `.msi.zip`, `.nsis.zip`) takes
 *   the platform of what it wraps; its file type stays the archive's (`tar.gz`, `zip`: what is downloaded), and
 *   `innerFileType` tells the wrapped one to the updater protocols that need it.
 * - A blockmap (`FILE.blockmap`, electron-builder's differential-download map) takes FILE's platform and arch, so
 *   it sits with the file it describes; its file type stays `blockmap`, which nothing recommends.
 * - Checksums, update ymls and source archives get platform "" and arch "".
 */
export function classifyAsset(name: string): { platform: Platform | ""; arch: Arch | ""; fileType: string } {
  const { base, fileType } = splitExtension(name.trim());
  if (fileType === "blockmap") {
    const of = classifyAsset(base);
    return { platform: of.platform, arch: of.arch, fileType };
  }
  const toks = tokens(base);

  let platform: Platform | "" = "";
  if (WINDOWS_TYPES.has(fileType)) platform = "windows";
  else if (MACOS_TYPES.has(fileType)) platform = "macos";
  else if (LINUX_TYPES.has(fileType)) platform = "linux";
  else if (fileType === "zip" && isWebZipName(name.trim())) platform = "web";
  else if (ARCHIVE_TYPES.has(fileType)) {
    const inner = innerFileType(name);
    if (inner) platform = INNER_TYPES[inner.toLowerCase()].platform;
    else {
      for (const t of toks) {
        const p = PLATFORM_ALIASES[t];
        if (p && p !== "web") {
          platform = p;
          break;
        }
      }
    }
  }

  if (platform === "") return { platform, arch: "", fileType };
  if (platform === "web") return { platform, arch: "universal", fileType };

  let arch: Arch | "" = "x64";
  for (const t of toks) {
    if (ARCH_ALIASES[t]) {
      arch = ARCH_ALIASES[t];
      break;
    }
    if (FOREIGN_ARCH_TOKENS.has(t)) {
      arch = "";
      break;
    }
  }
  return { platform, arch, fileType };
}

export function assetSource(asset: Pick<Asset, "mirrored" | "upstreamUrl">): AssetSource {
  if (asset.mirrored) return "mirror";
  if (asset.upstreamUrl) return "proxy";
  return "unavailable";
}

/**
 * Deterministic pick among equally ranked candidates: the shortest name (the plain build rather than a
 * `-debug`/`-symbols` variant), then name order, then id.
 */
function tieBreak(a: Asset, b: Asset): number {
  if (a.name.length !== b.name.length) return a.name.length - b.name.length;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.id - b.id;
}

/** The first tier with any candidate wins; inside a tier, `tieBreak`. */
function pickFirst(candidates: Asset[], tiers: Array<(a: Asset) => boolean>): Asset | undefined {
  for (const tier of tiers) {
    const hits = candidates.filter(tier).sort(tieBreak);
    if (hits.length > 0) return hits[0];
  }
  return undefined;
}

function windowsPick(assets: Asset[]): Asset[] {
  const x64 = assets.filter((a) => a.platform === "windows" && a.arch === "x64");
  const isSetupExe = (a: Asset) => a.fileType === "exe" && tokens(a.name.replace(/\.exe$/i, "")).includes("setup");
  const pick = pickFirst(x64, [
    (a) => /x64-setup\.exe$/i.test(a.name),
    isSetupExe,
    (a) => a.fileType === "exe",
    (a) => a.fileType === "msi",
    (a) => a.fileType === "msix",
  ]);
  return pick ? [pick] : [];
}

function macosPicks(assets: Asset[]): Asset[] {
  const dmgs = assets.filter((a) => a.platform === "macos" && a.fileType === "dmg");
  const out = new Set<Asset>();
  for (const arch of ["arm64", "x64"] as const) {
    const pick = pickFirst(dmgs, [(a) => a.arch === arch, (a) => a.arch === "universal"]);
    if (pick) out.add(pick);
  }
  return [...out];
}

function linuxPicks(assets: Asset[]): Asset[] {
  const linux = assets.filter((a) => a.platform === "linux" && a.arch !== "");
  const arches = [...new Set(linux.map((a) => a.arch))];
  const out: Asset[] = [];
  for (const arch of arches) {
    const ofArch = linux.filter((a) => a.arch === arch);
    const pick = pickFirst(ofArch, [(a) => a.fileType === "AppImage", (a) => a.fileType === "deb"]);
    if (pick) out.push(pick);
  }
  return out;
}

/** Also the pick of the legacy manifest, so both endpoints agree on which zip is "the" web update. */
export function pickWebZip(assets: Asset[]): Asset | undefined {
  return pickFirst(
    assets.filter((a) => assetSource(a) !== "unavailable"),
    [(a) => a.platform === "web" && isWebZipName(a.name)],
  );
}

/**
 * Recommendation rules of the spec, over all assets of one release (callers filter afterwards, so a filter
 * never changes which asset is recommended).
 * - windows: one asset, x64 only: `*x64-setup.exe`, else an x64 `.exe` with a `setup` token, else any x64
 *   `.exe`, else `.msi`, else `.msix`.
 * - macos: one DMG for arm64 and one for x64; a universal DMG stands in for a missing arch (one universal DMG
 *   alone is recommended once and serves both).
 * - linux: per arch, the AppImage, else the deb; rpm and others never.
 * - web: one `web-*.zip`.
 * Ties inside a rule go to the shortest name, then name order, then id.
 * Assets with no bytes to serve (`unavailable`) are never recommended; the next candidate is.
 */
export function markRecommended(assets: Asset[]): AssetWithRecommendation[] {
  const available = assets.filter((a) => assetSource(a) !== "unavailable");
  const web = pickWebZip(available);
  const picked = new Set<number>([
    ...windowsPick(available),
    ...macosPicks(available),
    ...linuxPicks(available),
    ...(web ? [web] : []),
  ].map((a) => a.id));
  return assets.map((a) => ({ ...a, recommended: picked.has(a.id) }));
}
