/**
 * Squirrel.Windows (pure): the `RELEASES` file of a feed, one line per package, `SHA1 URL SIZE`, which the client
 * (Update.exe, or SyncReleases.exe) reads from `FEED/RELEASES` (`?id=APP&localVersion=V` added) and whose packages
 * it downloads by the address given. Gantry writes absolute addresses (Squirrel takes the file name, which names
 * the version, from the end of the path), so downloads go through Gantry's links.
 *
 * Decisions:
 * - The packages of the release offered: its `-full.nupkg` (required: a release without one is passed over) and
 *   its `-delta.nupkg` when published, for the feed's arch (`x64` when the name carries none, as Squirrel's do).
 * - Only packages whose SHA-1 is known are listed (the line needs it; asset-digests.ts).
 */
import { AppError } from "../../../../errors";
import { assetSource, normalizeArch, nupkgKind } from "../../../releases/rules/classify";
import type { Arch, Asset, Release } from "../../../releases/release-repository";
import { updateFileUrl } from "../../rules/update-files";

export function parseSquirrelWindowsArch(arch: string): Arch {
  const a = normalizeArch(arch);
  if (a !== "x64" && a !== "x86" && a !== "arm64") throw new AppError("invalid_request", `Unknown arch '${arch.slice(0, 32)}'; expected x64, x86 or arm64.`, { param: "arch" });
  return a;
}

/** The full package and its delta (when there is one) of this release for the arch, or null without a full one. */
export function squirrelPackages(release: Release, arch: Arch): Asset[] | null {
  const of = release.assets.filter((a) => a.platform === "windows" && a.arch === arch && a.fileType === "nupkg" && Boolean(a.sha1) && a.size !== null && assetSource(a) !== "unavailable");
  const full = of.find((a) => nupkgKind(a.name) === "full");
  if (!full) return null;
  const delta = of.find((a) => nupkgKind(a.name) === "delta");
  return delta ? [full, delta] : [full];
}

export function buildReleasesFile(packages: readonly Asset[], baseUrl: string): string {
  return packages.map((p) => `${p.sha1!.toUpperCase()} ${updateFileUrl(baseUrl, p)} ${p.size}`).join("\r\n") + "\r\n";
}
