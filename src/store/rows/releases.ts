/** The releases and release_assets rows ↔ ReleaseRecord and AssetRecord, for every backend (each keeps its own SQL). */
import type { Arch, AssetFields, AssetRecord, Platform, ReleaseChanges, ReleaseOrigin, ReleaseRecord } from "../../site/releases/release-repository";
import type { ColumnCodec, Row } from "./codec";

/** The asset fields a write may set, by column. Column names in SQL come from here, never from input. */
export const ASSET_COLUMNS: Record<keyof AssetFields, string> = {
  platform: "platform",
  arch: "arch",
  fileType: "file_type",
  classifiedByOperator: "classified_by_operator",
  sha256: "sha256",
  sha512: "sha512",
  sha1: "sha1",
  size: "size",
  mirrored: "mirrored",
  upstreamUrl: "upstream_url",
  remoteId: "remote_id",
  remoteApiUrl: "remote_api_url",
  remoteUpdatedAt: "remote_updated_at",
  remoteDigest: "remote_digest",
  remoteSize: "remote_size",
  mirrorError: "mirror_error",
  mirrorPending: "mirror_pending",
  signature: "signature",
  signatureUrl: "signature_url",
  signatureApiUrl: "signature_api_url",
};

/** The release fields an update may set, by column. */
export const RELEASE_COLUMNS: Record<keyof ReleaseChanges, string> = {
  notes: "notes",
  publishedAt: "published_at",
  minAppVersion: "min_app_version",
  prerelease: "prerelease",
  remoteId: "remote_id",
  rolloutPercent: "rollout_percent",
  rolloutPaused: "rollout_paused",
  yanked: "yanked",
};

/** An asset row with its download count (the `downloads` column of the backends' asset query). */
export function assetFromRow(r: Row, c: ColumnCodec): AssetRecord {
  return {
    id: c.num(r.id),
    releaseId: c.num(r.release_id),
    name: r.name as string,
    platform: r.platform as Platform | "",
    arch: r.arch as Arch | "",
    fileType: r.file_type as string,
    sha256: r.sha256 as string,
    sha512: (r.sha512 as string | null) ?? "",
    sha1: (r.sha1 as string | null) ?? "",
    size: c.numOrNull(r.size),
    upstreamUrl: r.upstream_url as string | null,
    mirrored: c.bool(r.mirrored),
    downloads: c.num(r.downloads),
    classifiedByOperator: c.bool(r.classified_by_operator),
    remoteId: c.numOrNull(r.remote_id),
    remoteApiUrl: r.remote_api_url as string | null,
    remoteUpdatedAt: r.remote_updated_at as string | null,
    remoteDigest: r.remote_digest as string | null,
    remoteSize: c.numOrNull(r.remote_size),
    mirrorError: r.mirror_error as string | null,
    mirrorPending: c.bool(r.mirror_pending),
    signature: (r.signature as string | null) ?? null,
    signatureUrl: (r.signature_url as string | null) ?? null,
    signatureApiUrl: (r.signature_api_url as string | null) ?? null,
    createdAt: c.num(r.created_at),
    updatedAt: c.num(r.updated_at),
  };
}

export function releaseFromRow(r: Row, c: ColumnCodec, assets: AssetRecord[]): ReleaseRecord {
  return {
    id: c.num(r.id),
    version: r.version as string,
    notes: r.notes as string,
    publishedAt: r.published_at as string,
    minAppVersion: r.min_app_version as string,
    prerelease: c.bool(r.prerelease),
    rolloutPercent: c.num(r.rollout_percent),
    rolloutPaused: c.bool(r.rollout_paused),
    yanked: c.bool(r.yanked),
    origin: r.origin as ReleaseOrigin,
    remoteId: c.numOrNull(r.remote_id),
    createdAt: c.num(r.created_at),
    updatedAt: c.num(r.updated_at),
    assets,
  };
}
