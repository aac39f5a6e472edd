/** The back office's view of releases and assets (admin API and `gantry releases list --json`). Pure. */
import { assetSource } from "./rules/classify";
import type { AssetRecord, ReleaseRecord } from "./rules/release-types";
import { compareVersions, isValidVersion } from "./rules/versions";

export interface AssetView {
  id: number;
  name: string;
  platform: string;
  arch: string;
  fileType: string;
  /** `sha256:<hex>` or "". */
  sha256: string;
  /** The updaters' digests (asset-digests.ts): SHA-512 in base64, SHA-1 in hex; "" while unknown. */
  sha512: string;
  sha1: string;
  size: number | null;
  source: "mirror" | "proxy" | "unavailable";
  upstreamUrl: string | null;
  downloads: number;
  classifiedByOperator: boolean;
  mirrorPending: boolean;
  mirrorError: string | null;
}

export interface ReleaseView {
  id: number;
  version: string;
  notes: string;
  publishedAt: string;
  minAppVersion: string;
  prerelease: boolean;
  /** Staged rollout: the share of client ids offered the release (100 = everyone). */
  rolloutPercent: number;
  /** The percentage is frozen until resumed. */
  rolloutPaused: boolean;
  /** In no document; its files stay downloadable. */
  yanked: boolean;
  origin: string;
  downloads: number;
  assets: AssetView[];
}

export function assetView(a: AssetRecord): AssetView {
  return {
    id: a.id,
    name: a.name,
    platform: a.platform,
    arch: a.arch,
    fileType: a.fileType,
    sha256: a.sha256 ? `sha256:${a.sha256}` : "",
    sha512: a.sha512 ?? "",
    sha1: a.sha1 ?? "",
    size: a.size,
    source: assetSource(a),
    upstreamUrl: a.upstreamUrl,
    downloads: a.downloads,
    classifiedByOperator: a.classifiedByOperator,
    mirrorPending: a.mirrorPending,
    mirrorError: a.mirrorError,
  };
}

export function releaseView(r: ReleaseRecord): ReleaseView {
  return {
    id: r.id,
    version: r.version,
    notes: r.notes,
    publishedAt: r.publishedAt,
    minAppVersion: r.minAppVersion,
    prerelease: r.prerelease,
    rolloutPercent: r.rolloutPercent,
    rolloutPaused: r.rolloutPaused,
    yanked: r.yanked,
    origin: r.origin,
    downloads: r.assets.reduce((n, a) => n + a.downloads, 0),
    assets: r.assets.map(assetView),
  };
}

/**
 * Each release with `onlineClients`: the online clients whose heartbeat reports its version (in any spelling:
 * `v1.2`, `1.2.0`), from the online statistics' `byVersion`.
 */
export function withOnlineClients<T extends { version: string }>(views: T[], byVersion: Record<string, number>): Array<T & { onlineClients: number }> {
  const reported = Object.entries(byVersion).filter(([v]) => isValidVersion(v));
  return views.map((r) => ({
    ...r,
    onlineClients: isValidVersion(r.version) ? reported.reduce((n, [v, count]) => (compareVersions(v, r.version) === 0 ? n + count : n), 0) : 0,
  }));
}

/** Newest version first (invalid versions last), as an operator reads a list. */
export function sortNewestFirst(releases: ReleaseRecord[]): ReleaseRecord[] {
  return [...releases].sort((a, b) => compareVersions(b.version, a.version) || b.id - a.id);
}
