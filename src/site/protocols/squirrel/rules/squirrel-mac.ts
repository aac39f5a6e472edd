/**
 * Squirrel.Mac's server mode (pure), what Electron's built-in autoUpdater speaks on macOS: the app asks
 * `FEED/ARCH/VERSION` (its feed URL ends with its arch and the version it runs) and gets 204 when up to date, else
 * 200 `{url, name, notes, pub_date}` (only `url` is required; Squirrel installs whatever it is given, so Gantry
 * answers only a newer release). Squirrel.Mac installs zips of the app bundle.
 *
 * Decision: the zip for the arch (`x64`, `arm64`; `aarch64` and `x86_64` accepted), a universal zip where there is
 * none for the arch; the shortest name among equals (the plain build before a variant).
 */
import { AppError } from "../../../../errors";
import { assetSource, normalizeArch } from "../../../releases/rules/classify";
import { isValidVersion, normalizeVersion } from "../../../releases/rules/versions";
import type { Arch, Asset, Release } from "../../../releases/release-repository";
import { updateFileUrl } from "../../rules/update-files";

export interface SquirrelMacRequest {
  arch: Arch;
  current: string;
}

export function parseSquirrelMacRequest(arch: string, version: string): SquirrelMacRequest {
  const a = normalizeArch(arch);
  if (a !== "x64" && a !== "arm64" && a !== "universal") {
    throw new AppError("invalid_request", `Unknown arch '${arch.slice(0, 32)}'; expected x64 or arm64.`, { param: "arch" });
  }
  if (!isValidVersion(version)) throw new AppError("invalid_request", `'${version.slice(0, 64)}' is not a version.`, { param: "version" });
  return { arch: a, current: version };
}

const byName = (a: Asset, b: Asset) => a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);

export function squirrelMacZip(release: Release, arch: Arch): Asset | null {
  const zips = release.assets.filter((a) => a.platform === "macos" && a.fileType === "zip" && assetSource(a) !== "unavailable");
  return zips.filter((a) => a.arch === arch).sort(byName)[0] ?? zips.filter((a) => a.arch === "universal").sort(byName)[0] ?? null;
}

export interface SquirrelMacUpdate {
  url: string;
  name: string;
  notes: string;
  pub_date: string;
}

export function buildSquirrelMacUpdate(release: Release, zip: Asset, baseUrl: string): SquirrelMacUpdate {
  return { url: updateFileUrl(baseUrl, zip), name: normalizeVersion(release.version), notes: release.notes, pub_date: release.publishedAt };
}
