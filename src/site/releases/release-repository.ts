/**
 * Releases and their assets: the releases feature's port for them. The embedded default is SQLite
 * (store/sqlite/releases.ts); a shared database implements the same calls. Writes that belong together
 * (publishing, applying a sync) are single operations here, each atomic, never transactions opened by callers.
 * Every committed change moves the change feed's "releases" topic, which the rendered documents follow. The
 * releases and assets it speaks in are types of the rules (rules/release-types.ts), which read them and import
 * nothing of this folder; they are re-exported here, with `versionKey`, so an implementation needs the port alone.
 */
import type { AssetFields, AssetRecord, NewRelease, ReleaseBatchItem, ReleaseChanges, ReleaseRecord } from "./rules/release-types";

export type {
  Arch,
  Asset,
  AssetFields,
  AssetRecord,
  AssetSource,
  NewRelease,
  Platform,
  Release,
  ReleaseBatchItem,
  ReleaseChanges,
  ReleaseOrigin,
  ReleaseRecord,
} from "./rules/release-types";
export { versionKey } from "./rules/versions";

/** A release to create, or the changes to make when one of that version exists. */
export interface ReleasePut {
  create: NewRelease;
  change: ReleaseChanges;
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
