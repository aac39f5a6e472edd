/**
 * electron-updater's generic provider (pure): which feed file a request names, which of a release's files that
 * feed offers, and the YAML it reads. The client fetches `CHANNEL.yml` (Windows), `CHANNEL-mac.yml`,
 * `CHANNEL-linux.yml` or `CHANNEL-linux-ARCH.yml` from the configured URL, compares the version itself, and checks
 * the SHA-512 of what it downloads; a file without one is refused by the client (ERR_UPDATER_NO_CHECKSUM), so a
 * file whose digest is not known yet is not offered (asset-digests.ts).
 *
 * Decisions:
 * - Channel `latest` offers releases only; any other channel (`beta`, `alpha`, …) offers pre-releases as well.
 * - Windows: one NSIS installer (`.exe`), x64 first (a `setup` name first), as electron-builder's latest.yml has.
 *   macOS: every zip (Squirrel.Mac installs zips; the client picks arm64 or x64 by the name). Linux: the AppImage,
 *   deb and rpm of the feed's arch (x64 without a suffix, `-arm64`, `-ia32`), the AppImage first (it is `path`).
 * - A version with four parts has no SemVer spelling: that release is passed over (semver.ts).
 */
import { assetSource } from "../../../releases/rules/classify";
import type { Arch, Asset, Release } from "../../../releases/release-repository";
import { strictSemver } from "../../rules/semver";
import { updateFileUrl } from "../../rules/update-files";

export interface ElectronFeed {
  channel: string;
  platform: "windows" | "macos" | "linux";
  /** Linux only: the feed names its arch; the others list what they have. */
  arch: Arch | null;
}

const FEED_NAME = /^([a-z][a-z0-9]{0,31})(?:-(mac)|-(linux)(?:-(x64|arm64|ia32))?)?\.yml$/;
const ELECTRON_ARCH: Record<string, Arch> = { x64: "x64", arm64: "arm64", ia32: "x86" };

/** The feed a file name asks for, or null (404) for any other name. */
export function parseElectronFeedName(file: string): ElectronFeed | null {
  const m = FEED_NAME.exec(file);
  if (!m) return null;
  const [, channel, mac, linux, arch] = m;
  if (mac) return { channel, platform: "macos", arch: null };
  if (linux) return { channel, platform: "linux", arch: ELECTRON_ARCH[arch ?? "x64"] };
  return { channel, platform: "windows", arch: null };
}

export function channelTakesPrereleases(channel: string): boolean {
  return channel !== "latest";
}

/** The file can be offered: it has bytes to serve and the digest the client checks. */
function offerable(a: Asset): boolean {
  return assetSource(a) !== "unavailable" && Boolean(a.sha512) && a.size !== null;
}

const byName = (a: Asset, b: Asset) => a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);

/** The release's files for this feed, in the feed's order, or null when it has none (or no SemVer version). */
export function electronFiles(release: Release, feed: ElectronFeed): Asset[] | null {
  if (strictSemver(release.version) === null) return null;
  const of = release.assets.filter((a) => a.platform === feed.platform && offerable(a));
  let files: Asset[];
  if (feed.platform === "windows") {
    const exes = of.filter((a) => a.fileType === "exe").sort(byName);
    const setup = (a: Asset) => /setup/i.test(a.name);
    const rank = (a: Asset) => (a.arch === "x64" ? 0 : 2) + (setup(a) ? 0 : 1);
    files = exes.sort((a, b) => rank(a) - rank(b)).slice(0, 1);
  } else if (feed.platform === "macos") {
    files = of.filter((a) => a.fileType === "zip").sort(byName);
  } else {
    const order = ["AppImage", "deb", "rpm"];
    files = of.filter((a) => a.arch === feed.arch && order.includes(a.fileType)).sort((a, b) => order.indexOf(a.fileType) - order.indexOf(b.fileType) || byName(a, b));
  }
  return files.length > 0 ? files : null;
}

/** A YAML scalar: JSON's double-quoted string is a valid YAML one, with every character escaped as needed. */
const str = (s: string) => JSON.stringify(s);

/**
 * The feed's YAML for this release and files. `stagingPercentage` is given only where the client decides its own
 * staging (a request without a staging id); where Gantry decided by the id, the client is not asked to decide again.
 */
export function buildElectronYml(release: Release, files: readonly Asset[], baseUrl: string, stagingPercentage?: number): string {
  const lines = [`version: ${str(strictSemver(release.version)!)}`, "files:"];
  for (const f of files) {
    lines.push(`  - url: ${str(updateFileUrl(baseUrl, f))}`, `    sha512: ${str(f.sha512!)}`, `    size: ${f.size}`);
  }
  lines.push(`path: ${str(updateFileUrl(baseUrl, files[0]))}`, `sha512: ${str(files[0].sha512!)}`, `releaseDate: ${str(release.publishedAt)}`);
  if (release.notes) lines.push(`releaseNotes: ${str(release.notes)}`);
  if (stagingPercentage !== undefined) lines.push(`stagingPercentage: ${stagingPercentage}`);
  return lines.join("\n") + "\n";
}
