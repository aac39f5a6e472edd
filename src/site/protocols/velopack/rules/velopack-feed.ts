/**
 * Velopack (Squirrel's successor), pure: the feed `FEED/releases.{channel}.json` the client reads
 * (`?localVersion=&id=&arch=&os=&rid=` added), `{ Assets: [{PackageId, Version, Type, FileName, SHA1, SHA256, Size,
 * NotesMarkdown}] }`, whose packages it downloads from `FEED/{FileName}` (Gantry redirects that to its download
 * link) and checks against SHA1. FileName is the package's name: the client keeps it as the local file name.
 *
 * Decisions:
 * - Channels are Velopack's: `win`, `osx` and `linux` by default, one per OS; a package's channel is the name
 *   between the release's version and `-full`/`-delta` (`MyApp-1.2.0-linux-full.nupkg`), `win` when there is none
 *   (`MyApp-1.2.0-full.nupkg`, as Squirrel and Velopack name Windows packages). Other channel names work the same.
 * - The packages of the release offered: its full package (required) and its delta when published, with SHA-1 and
 *   SHA-256 known. Velopack takes SemVer only: other versions are passed over.
 */
import { assetSource, nupkgKind } from "../../../releases/rules/classify";
import { normalizeVersion } from "../../../releases/rules/versions";
import type { Asset, Release } from "../../../releases/release-repository";
import { strictSemver } from "../../rules/semver";

const CHANNEL_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const FEED_RE = /^releases\.([^/]+)\.json$/;

/** The channel a feed file names, or null (404) for another name. */
export function parseVelopackFeedName(file: string): string | null {
  const m = FEED_RE.exec(file);
  return m && CHANNEL_RE.test(m[1]) ? m[1] : null;
}

/**
 * `MyApp-1.2.0-linux-full.nupkg` of release 1.2.0 -> {id: MyApp, channel: linux}; with nothing between the version
 * and the kind, the `win` channel. Read with the release's version, since a pre-release suffix and a channel are
 * spelled alike (`1.2.0-beta-linux`); null when the name is not a package of that version.
 */
export function velopackPackageName(name: string, version: string): { id: string; channel: string } | null {
  const m = /^(.+)-(full|delta)\.nupkg$/i.exec(name);
  if (!m) return null;
  for (const v of new Set([version, normalizeVersion(version)])) {
    const at = m[1].lastIndexOf(`-${v}`);
    if (at <= 0) continue;
    const rest = m[1].slice(at + v.length + 1);
    if (rest === "") return { id: m[1].slice(0, at), channel: "win" };
    if (/^-[A-Za-z0-9][A-Za-z0-9_]*$/.test(rest)) return { id: m[1].slice(0, at), channel: rest.slice(1) };
  }
  return null;
}

export function velopackPackages(release: Release, channel: string): Asset[] | null {
  if (strictSemver(release.version) === null) return null;
  const of = release.assets.filter((a) => {
    const p = velopackPackageName(a.name, release.version);
    return a.fileType === "nupkg" && p !== null && p.channel.toLowerCase() === channel.toLowerCase() && Boolean(a.sha1) && Boolean(a.sha256) && a.size !== null && assetSource(a) !== "unavailable";
  });
  const full = of.find((a) => nupkgKind(a.name) === "full");
  if (!full) return null;
  const delta = of.find((a) => nupkgKind(a.name) === "delta");
  return delta ? [full, delta] : [full];
}

export interface VelopackAsset {
  PackageId: string;
  Version: string;
  Type: "Full" | "Delta";
  FileName: string;
  SHA1: string;
  SHA256: string;
  Size: number;
  NotesMarkdown: string;
}

export function buildVelopackFeed(release: Release, packages: readonly Asset[]): { Assets: VelopackAsset[] } {
  return {
    Assets: packages.map((p) => ({
      PackageId: velopackPackageName(p.name, release.version)!.id,
      Version: strictSemver(release.version)!,
      Type: nupkgKind(p.name) === "delta" ? "Delta" : "Full",
      FileName: p.name,
      SHA1: p.sha1!.toUpperCase(),
      SHA256: p.sha256.toUpperCase(),
      Size: p.size!,
      NotesMarkdown: release.notes,
    })),
  };
}
