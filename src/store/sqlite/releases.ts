/**
 * Releases, assets, download tokens and download counts in SQLite: the only code that knows those tables.
 * Rows come back as the site's types (types.ts) extended with bookkeeping the back office shows.
 */
import type { Database } from "bun:sqlite";
import type { Arch, Asset, Platform, Release } from "../../site/types";
import { normalizeVersion } from "../../site/releases/versions";
import { GenerationStamp } from "./generation-stamp";

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
  createdAt: number;
  updatedAt: number;
}

export interface ReleaseRecord extends Release {
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
}

export type ReleaseChanges = Partial<Pick<NewRelease, "notes" | "publishedAt" | "minAppVersion" | "prerelease" | "remoteId">>;

/** Asset fields that can be written; unset fields keep their value (or the column default on insert). */
export interface AssetFields {
  platform?: Platform | "";
  arch?: Arch | "";
  fileType?: string;
  classifiedByOperator?: boolean;
  sha256?: string;
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
}

interface ReleaseRow {
  id: number;
  version: string;
  notes: string;
  published_at: string;
  min_app_version: string;
  prerelease: number;
  origin: ReleaseOrigin;
  remote_id: number | null;
  created_at: number;
  updated_at: number;
}

interface AssetRow {
  id: number;
  release_id: number;
  name: string;
  platform: string;
  arch: string;
  file_type: string;
  classified_by_operator: number;
  sha256: string;
  size: number | null;
  mirrored: number;
  upstream_url: string | null;
  remote_id: number | null;
  remote_api_url: string | null;
  remote_updated_at: string | null;
  remote_digest: string | null;
  remote_size: number | null;
  mirror_error: string | null;
  mirror_pending: number;
  created_at: number;
  updated_at: number;
  downloads: number;
}

const ASSET_COLUMNS: Record<keyof AssetFields, string> = {
  platform: "platform",
  arch: "arch",
  fileType: "file_type",
  classifiedByOperator: "classified_by_operator",
  sha256: "sha256",
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
};

const ASSET_SELECT = `
  SELECT a.*, COALESCE((SELECT SUM(c.count) FROM download_counts c WHERE c.asset_id = a.id), 0) AS downloads
  FROM release_assets a`;

function toAsset(r: AssetRow): AssetRecord {
  return {
    id: r.id,
    releaseId: r.release_id,
    name: r.name,
    platform: r.platform as Platform | "",
    arch: r.arch as Arch | "",
    fileType: r.file_type,
    sha256: r.sha256,
    size: r.size,
    upstreamUrl: r.upstream_url,
    mirrored: r.mirrored === 1,
    downloads: r.downloads,
    classifiedByOperator: r.classified_by_operator === 1,
    remoteId: r.remote_id,
    remoteApiUrl: r.remote_api_url,
    remoteUpdatedAt: r.remote_updated_at,
    remoteDigest: r.remote_digest,
    remoteSize: r.remote_size,
    mirrorError: r.mirror_error,
    mirrorPending: r.mirror_pending === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRelease(r: ReleaseRow, assets: AssetRecord[]): ReleaseRecord {
  return {
    id: r.id,
    version: r.version,
    notes: r.notes,
    publishedAt: r.published_at,
    minAppVersion: r.min_app_version,
    prerelease: r.prerelease === 1,
    origin: r.origin,
    remoteId: r.remote_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    assets,
  };
}

function sqlValue(v: unknown): string | number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v as string | number;
}

/** The key that makes `v1.2.0` and `1.2.0` the same release. */
export function versionKey(version: string): string {
  return normalizeVersion(version).toLowerCase();
}

export class ReleaseStore {
  /** Moves on every change of releases or assets (see generation-stamp.ts). */
  readonly generation: GenerationStamp;

  constructor(
    private readonly db: Database,
    private readonly now: () => number,
  ) {
    this.generation = new GenerationStamp(db, "releases_generation");
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** All releases with their assets, newest first by creation (callers rank by version themselves). */
  list(): ReleaseRecord[] {
    const rows = this.db.query("SELECT * FROM releases ORDER BY id DESC").all() as ReleaseRow[];
    const assets = (this.db.query(`${ASSET_SELECT} ORDER BY a.id`).all() as AssetRow[]).map(toAsset);
    const byRelease = new Map<number, AssetRecord[]>();
    for (const a of assets) {
      const list = byRelease.get(a.releaseId) ?? [];
      list.push(a);
      byRelease.set(a.releaseId, list);
    }
    return rows.map((r) => toRelease(r, byRelease.get(r.id) ?? []));
  }

  /** By version as published or in any equivalent spelling (`v1.2.0` finds `1.2.0`). */
  get(version: string): ReleaseRecord | null {
    const row = this.db.query("SELECT * FROM releases WHERE version_key = ?").get(versionKey(version)) as ReleaseRow | null;
    return row ? this.withAssets(row) : null;
  }

  getById(id: number): ReleaseRecord | null {
    const row = this.db.query("SELECT * FROM releases WHERE id = ?").get(id) as ReleaseRow | null;
    return row ? this.withAssets(row) : null;
  }

  private withAssets(row: ReleaseRow): ReleaseRecord {
    const assets = (this.db.query(`${ASSET_SELECT} WHERE a.release_id = ? ORDER BY a.id`).all(row.id) as AssetRow[]).map(toAsset);
    return toRelease(row, assets);
  }

  createRelease(input: NewRelease): ReleaseRecord {
    this.generation.touch();
    const ts = this.now();
    const r = this.db
      .query(
        `INSERT INTO releases (version, version_key, notes, published_at, min_app_version, prerelease, origin, remote_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        input.version.trim(),
        versionKey(input.version),
        input.notes ?? "",
        input.publishedAt,
        input.minAppVersion ?? "",
        input.prerelease ? 1 : 0,
        input.origin ?? "manual",
        input.remoteId ?? null,
        ts,
        ts,
      ) as { id: number };
    return this.getById(r.id)!;
  }

  updateRelease(id: number, changes: ReleaseChanges): void {
    const columns: Record<keyof ReleaseChanges, string> = {
      notes: "notes",
      publishedAt: "published_at",
      minAppVersion: "min_app_version",
      prerelease: "prerelease",
      remoteId: "remote_id",
    };
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    for (const [k, col] of Object.entries(columns) as Array<[keyof ReleaseChanges, string]>) {
      if (changes[k] === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(sqlValue(changes[k]));
    }
    if (sets.length === 0) return;
    this.generation.touch();
    this.db.query(`UPDATE releases SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...values, this.now(), id);
  }

  /** Deletes a release and (by cascade) its assets, tokens and counts; returns the digests it referenced. */
  deleteRelease(id: number): string[] {
    const shas = (this.db.query("SELECT DISTINCT sha256 FROM release_assets WHERE release_id = ? AND sha256 != ''").all(id) as Array<{ sha256: string }>).map((r) => r.sha256);
    this.generation.touch();
    this.db.query("DELETE FROM releases WHERE id = ?").run(id);
    return shas;
  }

  getAsset(id: number): AssetRecord | null {
    const row = this.db.query(`${ASSET_SELECT} WHERE a.id = ?`).get(id) as AssetRow | null;
    return row ? toAsset(row) : null;
  }

  findAsset(releaseId: number, name: string): AssetRecord | null {
    const row = this.db.query(`${ASSET_SELECT} WHERE a.release_id = ? AND a.name = ?`).get(releaseId, name) as AssetRow | null;
    return row ? toAsset(row) : null;
  }

  /** Inserts the asset, or updates the one of the same name in that release; returns it. */
  upsertAsset(releaseId: number, name: string, fields: AssetFields): AssetRecord {
    const existing = this.findAsset(releaseId, name);
    if (existing) {
      this.updateAsset(existing.id, fields);
      return this.getAsset(existing.id)!;
    }
    this.generation.touch();
    const ts = this.now();
    const cols = ["release_id", "name", "created_at", "updated_at"];
    const values: Array<string | number | null> = [releaseId, name, ts, ts];
    for (const [k, col] of Object.entries(ASSET_COLUMNS) as Array<[keyof AssetFields, string]>) {
      if (fields[k] === undefined) continue;
      cols.push(col);
      values.push(sqlValue(fields[k]));
    }
    const r = this.db
      .query(`INSERT INTO release_assets (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING id`)
      .get(...values) as { id: number };
    return this.getAsset(r.id)!;
  }

  updateAsset(id: number, fields: AssetFields): void {
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    for (const [k, col] of Object.entries(ASSET_COLUMNS) as Array<[keyof AssetFields, string]>) {
      if (fields[k] === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(sqlValue(fields[k]));
    }
    if (sets.length === 0) return;
    this.generation.touch();
    this.db.query(`UPDATE release_assets SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...values, this.now(), id);
  }

  deleteAsset(id: number): void {
    this.generation.touch();
    this.db.query("DELETE FROM release_assets WHERE id = ?").run(id);
  }

  /** Whether any asset still points at these bytes (the mirror keeps one copy per digest). */
  isShaReferenced(sha256: string): boolean {
    return this.db.query("SELECT 1 FROM release_assets WHERE sha256 = ? AND mirrored = 1 LIMIT 1").get(sha256) !== null;
  }

  /** Assets sync still has to download, oldest first. */
  pendingMirrorAssets(): AssetRecord[] {
    return (this.db.query(`${ASSET_SELECT} WHERE a.mirror_pending = 1 ORDER BY a.id`).all() as AssetRow[]).map(toAsset);
  }

  // Sync lease ----------------------------------------------------------------------------------------------

  /**
   * Takes (or renews) a named lease in the meta table for `owner` until `until`: one atomic statement, so
   * a CLI sync and a server's periodic sync on the same database never run at once. An expired lease is
   * taken over (its holder crashed).
   */
  acquireLease(name: string, owner: string, until: number, now: number): boolean {
    const key = `lease:${name}`;
    const value = JSON.stringify({ owner, until });
    return this.transaction(() => {
      const row = this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null;
      if (row) {
        let held: { owner?: string; until?: number } = {};
        try {
          held = JSON.parse(row.value);
        } catch {
          // A corrupt lease is treated as free.
        }
        if (held.owner && held.owner !== owner && typeof held.until === "number" && held.until > now) return false;
      }
      this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
      return true;
    });
  }

  releaseLease(name: string, owner: string): void {
    const key = `lease:${name}`;
    this.db.query("DELETE FROM meta WHERE key = ? AND json_extract(value, '$.owner') = ?").run(key, owner);
  }
}
