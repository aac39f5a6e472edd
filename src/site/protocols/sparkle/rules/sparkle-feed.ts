/**
 * Sparkle's appcast (pure), what macOS apps built on Sparkle read from their `SUFeedURL`: an RSS document whose
 * `<item>` is the release offered, with its archive as the `<enclosure>`.
 *
 * Decisions:
 * - The archive for the feed's arch (`?arch=arm64` or `x86_64`/`x64`; a universal one where there is none for it;
 *   without an arch: universal, then x64, then arm64), of the kinds Sparkle installs: `.zip`, then `.dmg`, then a
 *   tarball (`.app.tar.gz`), then `.pkg`.
 * - `sparkle:edSignature` where the file's signature is Ed25519 over the file itself: a minisign signature of the
 *   legacy kind (`Ed`) is exactly that; a prehashed one (`ED`, minisign's default) signs a BLAKE2b hash, which
 *   Sparkle does not verify, so it is left out (sign with `minisign -l`, or Sparkle's `sign_update`).
 * - `sparkle:criticalUpdate sparkle:version="MIN"` from the release's minimum app version: an app older than that
 *   must take this update. `sparkle:minimumSystemVersion` is not known to Gantry and is not written.
 * - Staged rollouts are decided by Gantry (contract.md says why `sparkle:phasedRolloutInterval` is not used).
 */
import { assetSource } from "../../../releases/rules/classify";
import { normalizeVersion } from "../../../releases/rules/versions";
import type { Arch, Asset, Release } from "../../../releases/release-repository";
import { updateFileUrl } from "../../rules/update-files";

const ARCHIVE_ORDER = ["zip", "dmg", "tar.gz", "tar.xz", "tar.bz2", "pkg"];
const SPARKLE_ARCH: Record<string, Arch> = { arm64: "arm64", x86_64: "x64", x64: "x64" };

/** The feed's arch from `?arch=` ("" = none given), or undefined for a value Sparkle apps do not send. */
export function sparkleArch(value: string): Arch | null | undefined {
  if (value === "") return null;
  return SPARKLE_ARCH[value.toLowerCase()];
}

const byName = (a: Asset, b: Asset) => a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);

export function sparkleArchive(release: Release, arch: Arch | null): Asset | null {
  const archives = release.assets.filter((a) => a.platform === "macos" && ARCHIVE_ORDER.includes(a.fileType) && assetSource(a) !== "unavailable" && a.size !== null);
  const arches: Arch[] = arch ? [arch, "universal"] : ["universal", "x64", "arm64"];
  for (const ar of arches) {
    const hits = archives.filter((a) => a.arch === ar).sort((a, b) => ARCHIVE_ORDER.indexOf(a.fileType) - ARCHIVE_ORDER.indexOf(b.fileType) || byName(a, b));
    if (hits.length > 0) return hits[0];
  }
  return null;
}

const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
function xml(s: string): string {
  // Characters XML 1.0 cannot carry at all are dropped rather than breaking the document.
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "").replace(/[&<>"']/g, (c) => XML_ESCAPES[c]);
}

/** RFC 822 date, as RSS's pubDate is read. */
function rfc822(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? new Date(0).toUTCString() : new Date(t).toUTCString();
}

function mediaType(a: Asset): string {
  if (a.fileType === "zip") return "application/zip";
  if (a.fileType === "dmg") return "application/x-apple-diskimage";
  if (a.fileType === "pkg") return "application/octet-stream";
  return "application/gzip";
}

/**
 * The appcast with one item (the release offered), or with none when there is nothing to offer. `edSignature`: the
 * archive's Ed25519 signature in base64 (sparkle-signature.ts), null when it has none Sparkle can check.
 */
export function buildAppcast(offer: { release: Release; archive: Asset; edSignature: string | null } | null, baseUrl: string, title: string): string {
  const lines = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<rss version="2.0" xmlns:sparkle="http://www.andymatuschak.org/xml-namespaces/sparkle" xmlns:dc="http://purl.org/dc/elements/1.1/">',
    "  <channel>",
    `    <title>${xml(title)}</title>`,
  ];
  if (offer) {
    const { release, archive } = offer;
    const version = normalizeVersion(release.version);
    const ed = offer.edSignature;
    lines.push(
      "    <item>",
      `      <title>${xml(version)}</title>`,
      `      <pubDate>${rfc822(release.publishedAt)}</pubDate>`,
      `      <sparkle:version>${xml(version)}</sparkle:version>`,
      `      <sparkle:shortVersionString>${xml(version)}</sparkle:shortVersionString>`,
    );
    if (release.minAppVersion) lines.push(`      <sparkle:criticalUpdate sparkle:version="${xml(normalizeVersion(release.minAppVersion))}"></sparkle:criticalUpdate>`);
    if (release.notes) lines.push(`      <description>${xml(release.notes)}</description>`);
    lines.push(
      `      <enclosure url="${xml(updateFileUrl(baseUrl, archive))}" length="${archive.size}" type="${mediaType(archive)}"${ed ? ` sparkle:edSignature="${ed}"` : ""}/>`,
      "    </item>",
    );
  }
  lines.push("  </channel>", "</rss>");
  return lines.join("\n") + "\n";
}
