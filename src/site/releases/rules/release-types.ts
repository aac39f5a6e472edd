/**
 * The releases' domain types: a release and its assets (as the documents read them, and as the repository port,
 * release-repository.ts, stores them), the changes a sync plans, and the shapes of the release documents that are
 * not stored rows. Declared here, with the rules that read them, so that rules/ imports nothing of its parent.
 */
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

/** An asset with whether it is the one to offer for its platform and arch (classify.ts, markRecommended). */
export type AssetWithRecommendation = Asset & { recommended: boolean };

/** Filters of GET /api/v1/latest after normalisation; absent = no filter. */
export interface LatestQuery {
  platform?: Platform;
  arch?: Arch;
  fileType?: string;
}
