/**
 * Tauri v2's updater (pure): the dynamic endpoint's request (`{{target}}/{{arch}}/{{current_version}}`, and
 * `{{bundle_type}}` where the app's URL gives it as `?bundle_type=`), which signed bundle of a release answers it,
 * and the two documents: the dynamic answer `{version, notes, pub_date, url, signature}` and the static
 * `latest.json` (`platforms` map). Tauri refuses an update without a signature, so only signed bundles are offered;
 * `signature` is the `.sig` file's content (the base64 of the minisign signature text), as Tauri verifies it.
 *
 * Decisions:
 * - Bundles: linux `.AppImage` or `.AppImage.tar.gz` (appimage), `.deb`, `.rpm`; macOS `.app.tar.gz` (app);
 *   Windows `-setup.exe` or `.nsis.zip` (nsis), `.msi` or `.msi.zip` (msi). Without a bundle type the first of
 *   those the release has is offered (AppImage, NSIS, app); an exact arch before a universal build.
 * - An arch Gantry does not build for (`armv7`, `riscv64`) is answered "no update", not an error; an unknown
 *   target, bundle type or a current version that is no version is a 400.
 * - Tauri has no channels: pre-releases are not offered.
 */
import { AppError } from "../../../../errors";
import { assetSource, innerFileType } from "../../../releases/rules/classify";
import type { Arch, Asset, Platform, Release } from "../../../releases/release-repository";
import { isValidVersion } from "../../../releases/rules/versions";
import { strictSemver } from "../../rules/semver";
import { updateFileUrl } from "../../rules/update-files";

export type BundleType = "appimage" | "deb" | "rpm" | "app" | "msi" | "nsis";

export interface TauriRequest {
  platform: Platform;
  /** null: an arch Gantry has no builds for. */
  arch: Arch | null;
  currentVersion: string;
  bundleType: BundleType | null;
}

const TARGETS: Record<string, Platform> = { linux: "linux", windows: "windows", darwin: "macos" };
const TAURI_OS: Partial<Record<Platform, string>> = { linux: "linux", windows: "windows", macos: "darwin" };
const ARCHES: Record<string, Arch> = { x86_64: "x64", aarch64: "arm64", i686: "x86" };
const KNOWN_OTHER_ARCHES = new Set(["armv7", "riscv64"]);
const TAURI_ARCH: Partial<Record<Arch, string>> = { x64: "x86_64", arm64: "aarch64", x86: "i686" };
/** Per platform, the bundle types in the order offered when the request names none. */
const BUNDLES: Record<string, BundleType[]> = { linux: ["appimage", "deb", "rpm"], windows: ["nsis", "msi"], macos: ["app"] };

function bad(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

export function parseTauriRequest(target: string, arch: string, currentVersion: string, bundleType: string | undefined): TauriRequest {
  const platform = TARGETS[target];
  if (!platform) throw bad("target", `Unknown target '${target.slice(0, 32)}'; expected linux, windows or darwin.`);
  const a = ARCHES[arch];
  if (!a && !KNOWN_OTHER_ARCHES.has(arch)) throw bad("arch", `Unknown arch '${arch.slice(0, 32)}'; expected x86_64, aarch64, i686, armv7 or riscv64.`);
  if (!isValidVersion(currentVersion)) throw bad("current_version", `'${currentVersion.slice(0, 64)}' is not a version.`);
  let bundle: BundleType | null = null;
  if (bundleType) {
    if (!BUNDLES[platform].includes(bundleType as BundleType)) throw bad("bundle_type", `Unknown bundle type '${bundleType.slice(0, 32)}' for ${target}; expected ${BUNDLES[platform].join(", ")}.`);
    bundle = bundleType as BundleType;
  }
  return { platform, arch: a ?? null, currentVersion, bundleType: bundle };
}

/** The Tauri bundle type of an asset, or null when it is none. */
export function bundleTypeOf(a: Pick<Asset, "name" | "fileType">): BundleType | null {
  const inner = innerFileType(a.name);
  if (inner === "AppImage" || a.fileType === "AppImage") return "appimage";
  if (inner === "app") return "app";
  if (inner === "msi" || a.fileType === "msi") return "msi";
  if (inner === "nsis" || (a.fileType === "exe" && /setup\.exe$/i.test(a.name))) return "nsis";
  if (a.fileType === "deb") return "deb";
  if (a.fileType === "rpm") return "rpm";
  return null;
}

const byName = (a: Asset, b: Asset) => a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);

/** The signed bundle of this release for the platform, arch and bundle type (any, in order, when null). */
export function tauriBundle(release: Release, platform: Platform, arch: Arch | null, bundleType: BundleType | null): Asset | null {
  if (arch === null || strictSemver(release.version) === null) return null;
  const order = bundleType ? [bundleType] : BUNDLES[platform] ?? [];
  const candidates = release.assets.filter(
    // A universal build is macOS's x64 + arm64 (or a web bundle): never a 32-bit machine's.
    (a) => a.platform === platform && (a.arch === arch || (a.arch === "universal" && arch !== "x86")) && Boolean(a.signature) && assetSource(a) !== "unavailable",
  );
  for (const type of order) {
    const hits = candidates.filter((a) => bundleTypeOf(a) === type).sort((a, b) => Number(a.arch !== arch) - Number(b.arch !== arch) || byName(a, b));
    if (hits.length > 0) return hits[0];
  }
  return null;
}

/** A signature file's text as Tauri reads it: the base64 of the minisign text (what `tauri signer sign` writes). */
export function tauriSignature(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

export interface TauriUpdate {
  version: string;
  notes: string;
  pub_date: string;
  url: string;
  signature: string;
}

export function buildTauriUpdate(release: Release, bundle: Asset, baseUrl: string): TauriUpdate {
  return {
    version: strictSemver(release.version)!,
    notes: release.notes,
    pub_date: release.publishedAt,
    url: updateFileUrl(baseUrl, bundle),
    signature: tauriSignature(bundle.signature!),
  };
}

export interface TauriStatic {
  version: string;
  notes: string;
  pub_date: string;
  platforms: Record<string, { signature: string; url: string }>;
}

/**
 * The static `latest.json` of a release: `OS-ARCH` (the bundle offered without a bundle type) and
 * `OS-ARCH-BUNDLE` for each signed bundle; null when it has none (the whole file is validated by Tauri, so only
 * complete entries are written).
 */
export function buildTauriStatic(release: Release, baseUrl: string): TauriStatic | null {
  if (strictSemver(release.version) === null) return null;
  const platforms: TauriStatic["platforms"] = {};
  for (const platform of ["linux", "windows", "macos"] as const) {
    for (const arch of ["x64", "arm64", "x86"] as const) {
      const key = `${TAURI_OS[platform]}-${TAURI_ARCH[arch]}`;
      const entry = (a: Asset | null) => (a ? { signature: tauriSignature(a.signature!), url: updateFileUrl(baseUrl, a) } : null);
      const any = entry(tauriBundle(release, platform, arch, null));
      if (any) platforms[key] = any;
      for (const type of BUNDLES[platform]) {
        const one = entry(tauriBundle(release, platform, arch, type));
        if (one) platforms[`${key}-${type}`] = one;
      }
    }
  }
  if (Object.keys(platforms).length === 0) return null;
  return { version: strictSemver(release.version)!, notes: release.notes, pub_date: release.publishedAt, platforms };
}
