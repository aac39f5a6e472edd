/**
 * Releases and their assets: the releases feature's port for them. The embedded default is SQLite
 * (store/sqlite/releases.ts); a shared database implements the same calls. Writes that belong together
 * (publishing, applying a sync) are single operations here, each atomic, never transactions opened by callers.
 * Every committed change moves the change feed's "releases" topic, which the rendered documents follow.
 */
import { normalizeVersion } from "./rules/versions";

/** The full value set of `platform` (the spec shows these four; we add none). "" = not classified. */
export type Platform = "windows" | "macos" | "linux" | "web";

/** The full value set of `arch`. `universal` = runs on every arch (macOS universal builds, web bundles). */
export type Arch = "x64" | "arm64" | "x86" | "universal";

/**
 * Where the bytes of an asset come from: our mirror, the upstream address proxied by the site, or nowhere.
 * Clients show "cannot be downloaded" for `unavailable` (spec, integrator rule 3).
 */
export type AssetSource = "mirror" | "proxy" | "unavailable";

export interface Asset {
  id: number;
  releaseId: number;
  /** File name as published; classification is derived from it unless the operator overrides it. */
  name: string;
  platform: Platform | "";
  arch: Arch | "";
  /** Extension as conventionally written (`exe`, `AppImage`, `tar.gz`); "" when the name has none. */
  fileType: string;
  /** Lowercase hex without prefix, or "" while unknown (e.g. a proxied asset never downloaded). */
  sha256: string;
  /**
   * The digests updater protocols carry, computed with the SHA-256 when the bytes are stored (asset-digests.ts):
   * SHA-512 in base64 (electron-updater) and SHA-1 in lowercase hex (Squirrel.Windows); "" or absent while unknown.
   */
  sha512?: string;
  sha1?: string;
  size: number | null;
  upstreamUrl: string | null;
  mirrored: boolean;
  downloads: number;
  /**
   * The asset's minisign signature file (`NAME.minisig` / `NAME.sig`), its text as published (a Tauri `.sig`
   * decoded to it); null or absent when none was given. Verified against GANTRY_RELEASE_PUBLIC_KEY when set.
   */
  signature?: string | null;
}

export interface Release {
  id: number;
  /** As published (may carry a leading `v`); documents show it without the `v`. */
  version: string;
  notes: string;
  /** ISO 8601 UTC. */
  publishedAt: string;
  /** Set by the operator only; sync never raises it. "" = no minimum. */
  minAppVersion: string;
  prerelease: boolean;
  /** Staged rollout: the share of client ids (0-100) offered this release; absent or 100 = everyone. */
  rolloutPercent?: number;
  /** The rollout is paused: its percentage (and so its group of clients) stays as it is until resumed. */
  rolloutPaused?: boolean;
  /** Withdrawn from every document; its assets can still be downloaded by id. */
  yanked?: boolean;
  assets: Asset[];
}

export type ReleaseOrigin = "manual" | "github";

export interface AssetRecord extends Asset {
  classifiedByOperator: boolean;
  remoteId: number | null;
  remoteApiUrl: string | null;
  remoteUpdatedAt: string | null;
  /** GitHub's `digest` (`sha256:<hex>`) when the remote gave one. */
  remoteDigest: string | null;
  remoteSize: number | null;
  /** Why the last attempt to mirror this asset failed; null after a success. */
  mirrorError: string | null;
  /** Sync still has to (re)download the bytes. */
  mirrorPending: boolean;
  /**
   * Where sync fetches the asset's signature from: the browser download address of the release asset named
   * `NAME.minisig` (else `NAME.sig`) beside it on GitHub, and its API address (used with a token, as for the asset).
   * Null when the remote has none; the signature text itself is `signature`, stored once the bytes are mirrored.
   */
  signatureUrl: string | null;
  signatureApiUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ReleaseRecord extends Release {
  rolloutPercent: number;
  rolloutPaused: boolean;
  yanked: boolean;
  origin: ReleaseOrigin;
  remoteId: number | null;
  createdAt: number;
  updatedAt: number;
  assets: AssetRecord[];
}

export interface NewRelease {
  version: string;
  notes?: string;
  publishedAt: string;
  minAppVersion?: string;
  prerelease?: boolean;
  origin?: ReleaseOrigin;
  remoteId?: number | null;
  /** 0..100, default 100. */
  rolloutPercent?: number;
  rolloutPaused?: boolean;
  yanked?: boolean;
}

export type ReleaseChanges = Partial<
  Pick<NewRelease, "notes" | "publishedAt" | "minAppVersion" | "prerelease" | "remoteId" | "rolloutPercent" | "rolloutPaused" | "yanked">
>;

/** Asset fields that can be written; unset fields keep their value (or the column default on insert). */
export interface AssetFields {
  platform?: Platform | "";
  arch?: Arch | "";
  fileType?: string;
  classifiedByOperator?: boolean;
  sha256?: string;
  sha512?: string;
  sha1?: string;
  size?: number | null;
  mirrored?: boolean;
  upstreamUrl?: string | null;
  remoteId?: number | null;
  remoteApiUrl?: string | null;
  remoteUpdatedAt?: string | null;
  remoteDigest?: string | null;
  remoteSize?: number | null;
  mirrorError?: string | null;
  mirrorPending?: boolean;
  signature?: string | null;
  signatureUrl?: string | null;
  signatureApiUrl?: string | null;
}

/** A release to create, or the changes to make when one of that version exists. */
export interface ReleasePut {
  create: NewRelease;
  change: ReleaseChanges;
}

/** One release of a batch (a sync): created when `existingId` is null, else updated with `update`. */
export interface ReleaseBatchItem {
  version: string;
  existingId: number | null;
  /** Set when `existingId` is null. */
  create: NewRelease | null;
  update: ReleaseChanges;
  /** Assets to add (`existingId` null) or to update. */
  assets: Array<{ existingId: number | null; name: string; fields: AssetFields }>;
}

export interface ReleaseBatchResult {
  created: string[];
  updated: string[];
  assetsAdded: number;
  assetsUpdated: number;
}

/** One asset of a publish: `fields` always apply; `classification` only unless the operator classified the asset. */
export interface PublishedAsset {
  name: string;
  fields: AssetFields;
  classification: AssetFields;
}

/** The key that makes `v1.2.0` and `1.2.0` the same release. */
export function versionKey(version: string): string {
  return normalizeVersion(version).toLowerCase();
}

export interface ReleaseRepository {
  /** All releases with their assets, newest first by creation (callers rank by version themselves). */
  list(): Promise<ReleaseRecord[]>;
  /** By version as published or in any equivalent spelling (`v1.2.0` finds `1.2.0`). */
  get(version: string): Promise<ReleaseRecord | null>;
  getById(id: number): Promise<ReleaseRecord | null>;
  /** Creates the release; null when one of that version exists already. */
  create(input: NewRelease): Promise<ReleaseRecord | null>;
  /** Creates the release, or changes the metadata of the one of that version, atomically. */
  put(put: ReleasePut): Promise<ReleaseRecord>;
  /** Unknown ids are ignored. */
  update(id: number, changes: ReleaseChanges): Promise<void>;
  /** Deletes a release and its assets, tokens and counts; returns the digests its assets referenced. */
  delete(id: number): Promise<string[]>;
  /**
   * Creates or updates the release and upserts each asset by name, in one atomic step. Returns the release as
   * stored and the digests of mirrored bytes that assets no longer point at (the caller may collect them).
   */
  publish(release: ReleasePut, assets: readonly PublishedAsset[]): Promise<{ release: ReleaseRecord; replaced: string[] }>;
  /** Applies a whole sync in one atomic step. */
  applyBatch(items: readonly ReleaseBatchItem[]): Promise<ReleaseBatchResult>;
  getAsset(id: number): Promise<AssetRecord | null>;
  findAsset(releaseId: number, name: string): Promise<AssetRecord | null>;
  /**
   * Adds the asset to the release, or replaces the one of the same name, atomically; `replaced` holds the digest
   * of mirrored bytes the asset pointed at before and no longer does.
   */
  putAsset(releaseId: number, asset: PublishedAsset): Promise<{ asset: AssetRecord; replaced: string[] }>;
  updateAsset(id: number, fields: AssetFields): Promise<void>;
  deleteAsset(id: number): Promise<void>;
  /** Whether any mirrored asset still points at these bytes (the mirror keeps one copy per digest). */
  isShaReferenced(sha256: string): Promise<boolean>;
  /** Assets sync still has to download, oldest first. */
  pendingMirrorAssets(): Promise<AssetRecord[]>;
  /**
   * Takes (or renews) the named lease for `owner` until `until`, atomically, so two syncs on one store never run
   * at once; an expired lease is taken over (its holder died), and so is one whose owner names a process of this
   * host that no longer runs (state/process-owner.ts). False when someone else holds it.
   */
  acquireLease(name: string, owner: string, until: number, now: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
}
