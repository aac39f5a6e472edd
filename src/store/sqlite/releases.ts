/**
 * Releases and assets in SQLite (the row mapping, shared with PostgreSQL, is store/rows/releases.ts). Multi-row writes (publish, a sync's
 * batch, put) run in one IMMEDIATE transaction, so a CLI and a server on one database never interleave them.
 */
import type { Database } from "bun:sqlite";
import {
  versionKey,
  type AssetFields,
  type AssetRecord,
  type NewRelease,
  type PublishedAsset,
  type ReleaseBatchItem,
  type ReleaseBatchResult,
  type ReleaseChanges,
  type ReleasePut,
  type ReleaseRecord,
  type ReleaseRepository,
} from "../../site/releases/release-repository";
import type { Row } from "../rows/codec";
import { ASSET_COLUMNS, RELEASE_COLUMNS, assetFromRow, releaseFromRow } from "../rows/releases";
import { leaseHeldByOther, leaseKey } from "../rows/leases";
import { sqliteColumns } from "./columns";

type ReleaseRow = Row;
type AssetRow = Row;

const ASSET_SELECT = `
  SELECT a.*, COALESCE((SELECT SUM(c.count) FROM download_counts c WHERE c.asset_id = a.id), 0) AS downloads
  FROM release_assets a`;

const toAsset = (r: AssetRow) => assetFromRow(r, sqliteColumns);
const toRelease = (r: ReleaseRow, assets: AssetRecord[]) => releaseFromRow(r, sqliteColumns, assets);

function sqlValue(v: unknown): string | number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v as string | number;
}

export class SqliteReleaseRepository implements ReleaseRepository {
  constructor(
    private readonly db: Database,
    private readonly now: () => number,
    /** Runs after every committed change (the change feed's "releases" touch). */
    private readonly changed: () => void = () => {},
  ) {}

  /** Runs `fn` in one IMMEDIATE transaction and reports the change once it committed. */
  private write<T>(fn: () => T): T {
    const result = this.db.transaction(fn).immediate();
    this.changed();
    return result;
  }

  async list(): Promise<ReleaseRecord[]> {
    const rows = this.db.query("SELECT * FROM releases ORDER BY id DESC").all() as ReleaseRow[];
    const assets = (this.db.query(`${ASSET_SELECT} ORDER BY a.id`).all() as AssetRow[]).map(toAsset);
    const byRelease = new Map<number, AssetRecord[]>();
    for (const a of assets) {
      const list = byRelease.get(a.releaseId) ?? [];
      list.push(a);
      byRelease.set(a.releaseId, list);
    }
    return rows.map((r) => toRelease(r, byRelease.get(r.id as number) ?? []));
  }

  async get(version: string): Promise<ReleaseRecord | null> {
    return this.byVersion(version);
  }

  async getById(id: number): Promise<ReleaseRecord | null> {
    return this.byId(id);
  }

  async create(input: NewRelease): Promise<ReleaseRecord | null> {
    return this.write(() => (this.byVersion(input.version) ? null : this.byId(this.insertRelease(input))));
  }

  async put(put: ReleasePut): Promise<ReleaseRecord> {
    return this.write(() => this.byId(this.putRelease(put))!);
  }

  async update(id: number, changes: ReleaseChanges): Promise<void> {
    this.write(() => this.updateRelease(id, changes));
  }

  async delete(id: number): Promise<string[]> {
    return this.write(() => {
      const shas = (this.db.query("SELECT DISTINCT sha256 FROM release_assets WHERE release_id = ? AND sha256 != ''").all(id) as Array<{ sha256: string }>).map((r) => r.sha256);
      this.db.query("DELETE FROM releases WHERE id = ?").run(id);
      return shas;
    });
  }

  async publish(release: ReleasePut, assets: readonly PublishedAsset[]): Promise<{ release: ReleaseRecord; replaced: string[] }> {
    return this.write(() => {
      const id = this.putRelease(release);
      const replaced: string[] = [];
      for (const a of assets) this.putAssetRow(id, a, replaced);
      return { release: this.byId(id)!, replaced };
    });
  }

  async putAsset(releaseId: number, asset: PublishedAsset): Promise<{ asset: AssetRecord; replaced: string[] }> {
    return this.write(() => {
      const replaced: string[] = [];
      return { asset: this.putAssetRow(releaseId, asset, replaced), replaced };
    });
  }

  /** Upserts by name, keeping an operator's classification; notes the mirrored digest it stops pointing at. */
  private putAssetRow(releaseId: number, a: PublishedAsset, replaced: string[]): AssetRecord {
    const before = this.assetByName(releaseId, a.name);
    if (before?.mirrored && before.sha256 && before.sha256 !== a.fields.sha256) replaced.push(before.sha256);
    return this.upsert(releaseId, a.name, { ...(before?.classifiedByOperator ? {} : a.classification), ...a.fields });
  }

  async applyBatch(items: readonly ReleaseBatchItem[]): Promise<ReleaseBatchResult> {
    return this.write(() => {
      const result: ReleaseBatchResult = { created: [], updated: [], assetsAdded: 0, assetsUpdated: 0 };
      for (const item of items) {
        const releaseId = item.existingId ?? this.insertRelease(item.create!);
        if (item.existingId === null) result.created.push(item.version);
        else if (Object.keys(item.update).length > 0) {
          this.updateRelease(item.existingId, item.update);
          result.updated.push(item.version);
        }
        for (const a of item.assets) {
          if (a.existingId === null) {
            this.upsert(releaseId, a.name, a.fields);
            result.assetsAdded++;
          } else {
            this.updateAssetRow(a.existingId, a.fields);
            result.assetsUpdated++;
          }
        }
      }
      return result;
    });
  }

  async getAsset(id: number): Promise<AssetRecord | null> {
    return this.assetById(id);
  }

  async findAsset(releaseId: number, name: string): Promise<AssetRecord | null> {
    return this.assetByName(releaseId, name);
  }

  async updateAsset(id: number, fields: AssetFields): Promise<void> {
    this.write(() => this.updateAssetRow(id, fields));
  }

  async deleteAsset(id: number): Promise<void> {
    this.write(() => this.db.query("DELETE FROM release_assets WHERE id = ?").run(id));
  }

  async isShaReferenced(sha256: string): Promise<boolean> {
    return this.db.query("SELECT 1 FROM release_assets WHERE sha256 = ? AND mirrored = 1 LIMIT 1").get(sha256) !== null;
  }

  async pendingMirrorAssets(): Promise<AssetRecord[]> {
    return (this.db.query(`${ASSET_SELECT} WHERE a.mirror_pending = 1 ORDER BY a.id`).all() as AssetRow[]).map(toAsset);
  }

  async acquireLease(name: string, owner: string, until: number, now: number): Promise<boolean> {
    const key = leaseKey(name);
    const value = JSON.stringify({ owner, until });
    return this.db.transaction(() => {
      const row = this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null;
      if (row && leaseHeldByOther(row.value, owner, now)) return false;
      this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
      return true;
    }).immediate();
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    this.db.query("DELETE FROM meta WHERE key = ? AND json_extract(value, '$.owner') = ?").run(leaseKey(name), owner);
  }

  // Statements, run inside the callers' transactions ---------------------------------------------------------

  private byVersion(version: string): ReleaseRecord | null {
    const row = this.db.query("SELECT * FROM releases WHERE version_key = ?").get(versionKey(version)) as ReleaseRow | null;
    return row ? this.withAssets(row) : null;
  }

  private byId(id: number): ReleaseRecord | null {
    const row = this.db.query("SELECT * FROM releases WHERE id = ?").get(id) as ReleaseRow | null;
    return row ? this.withAssets(row) : null;
  }

  private withAssets(row: ReleaseRow): ReleaseRecord {
    const assets = (this.db.query(`${ASSET_SELECT} WHERE a.release_id = ? ORDER BY a.id`).all(row.id as number) as AssetRow[]).map(toAsset);
    return toRelease(row, assets);
  }

  private assetById(id: number): AssetRecord | null {
    const row = this.db.query(`${ASSET_SELECT} WHERE a.id = ?`).get(id) as AssetRow | null;
    return row ? toAsset(row) : null;
  }

  private assetByName(releaseId: number, name: string): AssetRecord | null {
    const row = this.db.query(`${ASSET_SELECT} WHERE a.release_id = ? AND a.name = ?`).get(releaseId, name) as AssetRow | null;
    return row ? toAsset(row) : null;
  }

  /** The id of the release of that version: created from `put.create`, or changed by `put.change`. */
  private putRelease(put: ReleasePut): number {
    const existing = this.db.query("SELECT id FROM releases WHERE version_key = ?").get(versionKey(put.create.version)) as { id: number } | null;
    if (!existing) return this.insertRelease(put.create);
    this.updateRelease(existing.id, put.change);
    return existing.id;
  }

  private insertRelease(input: NewRelease): number {
    const ts = this.now();
    const r = this.db
      .query(
        `INSERT INTO releases (version, version_key, notes, published_at, min_app_version, prerelease, origin, remote_id, created_at, updated_at,
           rollout_percent, rollout_paused, yanked)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
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
        input.rolloutPercent ?? 100,
        input.rolloutPaused ? 1 : 0,
        input.yanked ? 1 : 0,
      ) as { id: number };
    return r.id;
  }

  private updateRelease(id: number, changes: ReleaseChanges): void {
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    for (const [k, col] of Object.entries(RELEASE_COLUMNS) as Array<[keyof ReleaseChanges, string]>) {
      if (changes[k] === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(sqlValue(changes[k]));
    }
    if (sets.length === 0) return;
    this.db.query(`UPDATE releases SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...values, this.now(), id);
  }

  private upsert(releaseId: number, name: string, fields: AssetFields): AssetRecord {
    const existing = this.assetByName(releaseId, name);
    if (existing) {
      this.updateAssetRow(existing.id, fields);
      return this.assetById(existing.id)!;
    }
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
    return this.assetById(r.id)!;
  }

  private updateAssetRow(id: number, fields: AssetFields): void {
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    for (const [k, col] of Object.entries(ASSET_COLUMNS) as Array<[keyof AssetFields, string]>) {
      if (fields[k] === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(sqlValue(fields[k]));
    }
    if (sets.length === 0) return;
    this.db.query(`UPDATE release_assets SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...values, this.now(), id);
  }
}
