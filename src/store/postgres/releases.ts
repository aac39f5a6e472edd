/**
 * Releases and assets in PostgreSQL (the same rules as store/sqlite/releases.ts). Every write runs in one
 * transaction that first takes a transaction-level advisory lock, so writes from several instances and the CLI
 * apply one after another, as SQLite's IMMEDIATE transactions do; release writes are rare, reads take no lock.
 */
import type { SQL } from "bun";
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
import { num, numOrNull } from "./db";
import { ASSET_COLUMNS, RELEASE_COLUMNS, assetFromRow, releaseFromRow } from "../rows/releases";
import { leaseHeldByOther, leaseKey } from "../rows/leases";
import { postgresColumns } from "./columns";

/** An arbitrary constant naming the lock every release write holds. */
const RELEASES_LOCK = 0x72656c73; // "rels"

type Row = Record<string, any>;

const ASSET_SELECT = `
  SELECT a.*, COALESCE((SELECT SUM(c.count) FROM download_counts c WHERE c.asset_id = a.id), 0) AS downloads
  FROM release_assets a`;

const toAsset = (r: Row) => assetFromRow(r, postgresColumns);
const toRelease = (r: Row, assets: AssetRecord[]) => releaseFromRow(r, postgresColumns, assets);

/** `SET a = $1, b = $2` for the fields given (column names come from the tables above, never from input). */
function setClause(columns: Record<string, string>, fields: Record<string, unknown>, values: unknown[]): string[] {
  const sets: string[] = [];
  for (const [k, col] of Object.entries(columns)) {
    if (fields[k] === undefined) continue;
    values.push(fields[k]);
    sets.push(`${col} = $${values.length}`);
  }
  return sets;
}

export class PostgresReleaseRepository implements ReleaseRepository {
  constructor(
    private readonly sql: SQL,
    private readonly now: () => number,
    /** Runs after every committed change (the change feed's "releases" touch; the triggers tell the others). */
    private readonly changed: () => void = () => {},
  ) {}

  private async write<T>(fn: (tx: SQL) => Promise<T>): Promise<T> {
    const result = await this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${RELEASES_LOCK})`;
      return fn(tx);
    });
    this.changed();
    return result as T;
  }

  async list(): Promise<ReleaseRecord[]> {
    const [rows, assetRows] = await Promise.all([this.sql`SELECT * FROM releases ORDER BY id DESC`, this.sql.unsafe(`${ASSET_SELECT} ORDER BY a.id`)]);
    const byRelease = new Map<number, AssetRecord[]>();
    for (const a of assetRows.map(toAsset)) {
      const list = byRelease.get(a.releaseId) ?? [];
      list.push(a);
      byRelease.set(a.releaseId, list);
    }
    return rows.map((r: Row) => toRelease(r, byRelease.get(num(r.id)) ?? []));
  }

  get(version: string): Promise<ReleaseRecord | null> {
    return this.byVersion(this.sql, version);
  }

  getById(id: number): Promise<ReleaseRecord | null> {
    return this.byId(this.sql, id);
  }

  async create(input: NewRelease): Promise<ReleaseRecord | null> {
    return this.write(async (tx) => ((await this.byVersion(tx, input.version)) ? null : this.byId(tx, await this.insertRelease(tx, input))));
  }

  async put(put: ReleasePut): Promise<ReleaseRecord> {
    return this.write(async (tx) => (await this.byId(tx, await this.putRelease(tx, put)))!);
  }

  async update(id: number, changes: ReleaseChanges): Promise<void> {
    await this.write((tx) => this.updateRelease(tx, id, changes));
  }

  async delete(id: number): Promise<string[]> {
    return this.write(async (tx) => {
      const rows = await tx`SELECT DISTINCT sha256 FROM release_assets WHERE release_id = ${id} AND sha256 <> ''`;
      await tx`DELETE FROM releases WHERE id = ${id}`;
      return rows.map((r: Row) => r.sha256 as string);
    });
  }

  async publish(release: ReleasePut, assets: readonly PublishedAsset[]): Promise<{ release: ReleaseRecord; replaced: string[] }> {
    return this.write(async (tx) => {
      const id = await this.putRelease(tx, release);
      const replaced: string[] = [];
      for (const a of assets) await this.putAssetRow(tx, id, a, replaced);
      return { release: (await this.byId(tx, id))!, replaced };
    });
  }

  async putAsset(releaseId: number, asset: PublishedAsset): Promise<{ asset: AssetRecord; replaced: string[] }> {
    return this.write(async (tx) => {
      const replaced: string[] = [];
      return { asset: await this.putAssetRow(tx, releaseId, asset, replaced), replaced };
    });
  }

  private async putAssetRow(tx: SQL, releaseId: number, a: PublishedAsset, replaced: string[]): Promise<AssetRecord> {
    const before = await this.assetByName(tx, releaseId, a.name);
    if (before?.mirrored && before.sha256 && before.sha256 !== a.fields.sha256) replaced.push(before.sha256);
    return this.upsert(tx, releaseId, a.name, { ...(before?.classifiedByOperator ? {} : a.classification), ...a.fields });
  }

  async applyBatch(items: readonly ReleaseBatchItem[]): Promise<ReleaseBatchResult> {
    return this.write(async (tx) => {
      const result: ReleaseBatchResult = { created: [], updated: [], assetsAdded: 0, assetsUpdated: 0 };
      for (const item of items) {
        const releaseId = item.existingId ?? (await this.insertRelease(tx, item.create!));
        if (item.existingId === null) result.created.push(item.version);
        else if (Object.keys(item.update).length > 0) {
          await this.updateRelease(tx, item.existingId, item.update);
          result.updated.push(item.version);
        }
        for (const a of item.assets) {
          if (a.existingId === null) {
            await this.upsert(tx, releaseId, a.name, a.fields);
            result.assetsAdded++;
          } else {
            await this.updateAssetRow(tx, a.existingId, a.fields);
            result.assetsUpdated++;
          }
        }
      }
      return result;
    });
  }

  getAsset(id: number): Promise<AssetRecord | null> {
    return this.assetById(this.sql, id);
  }

  findAsset(releaseId: number, name: string): Promise<AssetRecord | null> {
    return this.assetByName(this.sql, releaseId, name);
  }

  async updateAsset(id: number, fields: AssetFields): Promise<void> {
    await this.write((tx) => this.updateAssetRow(tx, id, fields));
  }

  async deleteAsset(id: number): Promise<void> {
    await this.write((tx) => tx`DELETE FROM release_assets WHERE id = ${id}`);
  }

  async isShaReferenced(sha256: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM release_assets WHERE sha256 = ${sha256} AND mirrored LIMIT 1`).length > 0;
  }

  async pendingMirrorAssets(): Promise<AssetRecord[]> {
    return (await this.sql.unsafe(`${ASSET_SELECT} WHERE a.mirror_pending ORDER BY a.id`)).map(toAsset);
  }

  async acquireLease(name: string, owner: string, until: number, now: number): Promise<boolean> {
    const key = leaseKey(name);
    return this.sql.begin(async (tx) => {
      // The row lock (or, for a first lease, the key's uniqueness) makes the check and the take one step.
      const [row] = await tx`SELECT value FROM meta WHERE key = ${key} FOR UPDATE`;
      if (row && leaseHeldByOther(row.value, owner, now)) return false;
      const taken = await tx`INSERT INTO meta (key, value) VALUES (${key}, ${JSON.stringify({ owner, until })})
                             ON CONFLICT (key) DO ${row ? tx`UPDATE SET value = excluded.value` : tx`NOTHING`} RETURNING 1`;
      return taken.length === 1;
    }) as Promise<boolean>;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    const key = leaseKey(name);
    const [row] = await this.sql`SELECT value FROM meta WHERE key = ${key}`;
    if (!row) return;
    let held: { owner?: string } = {};
    try {
      held = JSON.parse(row.value);
    } catch {
      return;
    }
    if (held.owner === owner) await this.sql`DELETE FROM meta WHERE key = ${key} AND value = ${row.value}`;
  }

  // Statements, run inside the callers' transactions ---------------------------------------------------------

  private async byVersion(sql: SQL, version: string): Promise<ReleaseRecord | null> {
    const [row] = await sql`SELECT * FROM releases WHERE version_key = ${versionKey(version)}`;
    return row ? this.withAssets(sql, row) : null;
  }

  private async byId(sql: SQL, id: number): Promise<ReleaseRecord | null> {
    const [row] = await sql`SELECT * FROM releases WHERE id = ${id}`;
    return row ? this.withAssets(sql, row) : null;
  }

  private async withAssets(sql: SQL, row: Row): Promise<ReleaseRecord> {
    const assets = (await sql.unsafe(`${ASSET_SELECT} WHERE a.release_id = $1 ORDER BY a.id`, [row.id])).map(toAsset);
    return toRelease(row, assets);
  }

  private async assetById(sql: SQL, id: number): Promise<AssetRecord | null> {
    const [row] = await sql.unsafe(`${ASSET_SELECT} WHERE a.id = $1`, [id]);
    return row ? toAsset(row) : null;
  }

  private async assetByName(sql: SQL, releaseId: number, name: string): Promise<AssetRecord | null> {
    const [row] = await sql.unsafe(`${ASSET_SELECT} WHERE a.release_id = $1 AND a.name = $2`, [releaseId, name]);
    return row ? toAsset(row) : null;
  }

  private async putRelease(tx: SQL, put: ReleasePut): Promise<number> {
    const [existing] = await tx`SELECT id FROM releases WHERE version_key = ${versionKey(put.create.version)}`;
    if (!existing) return this.insertRelease(tx, put.create);
    await this.updateRelease(tx, num(existing.id), put.change);
    return num(existing.id);
  }

  private async insertRelease(tx: SQL, input: NewRelease): Promise<number> {
    const ts = this.now();
    const [r] = await tx`
      INSERT INTO releases (version, version_key, notes, published_at, min_app_version, prerelease, origin, remote_id, created_at, updated_at,
        rollout_percent, rollout_paused, yanked)
      VALUES (${input.version.trim()}, ${versionKey(input.version)}, ${input.notes ?? ""}, ${input.publishedAt}, ${input.minAppVersion ?? ""},
        ${input.prerelease === true}, ${input.origin ?? "manual"}, ${input.remoteId ?? null}, ${ts}, ${ts},
        ${input.rolloutPercent ?? 100}, ${input.rolloutPaused === true}, ${input.yanked === true})
      RETURNING id`;
    return num(r.id);
  }

  private async updateRelease(tx: SQL, id: number, changes: ReleaseChanges): Promise<void> {
    const values: unknown[] = [];
    const sets = setClause(RELEASE_COLUMNS, changes, values);
    if (sets.length === 0) return;
    values.push(this.now(), id);
    await tx.unsafe(`UPDATE releases SET ${sets.join(", ")}, updated_at = $${values.length - 1} WHERE id = $${values.length}`, values);
  }

  private async upsert(tx: SQL, releaseId: number, name: string, fields: AssetFields): Promise<AssetRecord> {
    const existing = await this.assetByName(tx, releaseId, name);
    if (existing) {
      await this.updateAssetRow(tx, existing.id, fields);
      return (await this.assetById(tx, existing.id))!;
    }
    const ts = this.now();
    const cols = ["release_id", "name", "created_at", "updated_at"];
    const values: unknown[] = [releaseId, name, ts, ts];
    for (const [k, col] of Object.entries(ASSET_COLUMNS) as Array<[keyof AssetFields, string]>) {
      if (fields[k] === undefined) continue;
      cols.push(col);
      values.push(fields[k]);
    }
    const [r] = await tx.unsafe(`INSERT INTO release_assets (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`, values);
    return (await this.assetById(tx, num(r.id)))!;
  }

  private async updateAssetRow(tx: SQL, id: number, fields: AssetFields): Promise<void> {
    const values: unknown[] = [];
    const sets = setClause(ASSET_COLUMNS, fields as Record<string, unknown>, values);
    if (sets.length === 0) return;
    values.push(this.now(), id);
    await tx.unsafe(`UPDATE release_assets SET ${sets.join(", ")}, updated_at = $${values.length - 1} WHERE id = $${values.length}`, values);
  }
}
