/**
 * `gantry store copy`: every record from one store into another (SQLite → PostgreSQL, or back), in one target
 * transaction from one source snapshot, then the asset bytes from one mirror into the other, then a check
 * that both stores hold the same rows (counts and a SHA-256 per table, in key order) and that every mirrored
 * asset's bytes are in the target mirror under their digest.
 */
import type { Mirror } from "../../site/releases/mirror";
import { COPIED_TABLES, TableDigest, type RecordSide } from "./tables";

export class TargetNotEmptyError extends Error {
  constructor(readonly target: string, readonly counts: Record<string, number>) {
    const what = Object.entries(counts).filter(([, n]) => n > 0).map(([t, n]) => `${n} ${t}`).join(", ");
    super(`${target} is not empty (${what}): pass --force to replace its records`);
  }
}

export interface TableReport {
  table: string;
  source: number;
  target: number;
  /** SHA-256 of the rows in key order; equal on both sides when the copy is exact. */
  sha256: string;
  same: boolean;
}

export interface CopyReport {
  source: string;
  target: string;
  tables: TableReport[];
  meta: number;
  files: { copied: number; present: number; bytes: number; missing: string[] };
  /** Every table the same on both sides and no mirrored file missing. */
  ok: boolean;
}

export interface CopyOptions {
  force?: boolean;
  /** Asset bytes: from the source's mirror to the target's; omitted when both sides use the same bytes. */
  mirrors?: { from: Mirror; to: Mirror };
  onProgress?: (line: string) => void;
  /**
   * Meta values that describe the target itself rather than the records, written after the copied ones in the same
   * transaction: which mirror holds the files, when the copy moves them into another mirror.
   */
  targetMeta?: Record<string, string>;
}

export async function copyStore(source: RecordSide, target: RecordSide, options: CopyOptions = {}): Promise<CopyReport> {
  const progress = options.onProgress ?? (() => {});
  const existing = await target.counts();
  if (!options.force && Object.values(existing).some((n) => n > 0)) throw new TargetNotEmptyError(target.label, existing);

  const columns = new Map<string, string[]>();
  for (const t of COPIED_TABLES) columns.set(t.name, await sharedColumns(source, target, t.name));
  const mirrored = new Map<string, number>();
  let meta = 0;
  await source.read(async (reader) => {
    await target.write(async (writer) => {
      if (options.force) await writer.clear();
      for (const t of COPIED_TABLES) {
        const cols = columns.get(t.name)!;
        let rows = 0;
        for await (const page of reader.pages(t.name, t.key, cols)) {
          await writer.insert(t.name, cols, page);
          rows += page.length;
          if (t.name === "release_assets") {
            for (const a of page) if (isTrue(a.mirrored) && a.sha256) mirrored.set(String(a.sha256), Number(a.size ?? -1));
          }
        }
        if (t.identity) await writer.finishIdentity(t.name, t.identity, await reader.lastIdentity(t.name, t.identity));
        progress(`${t.name}: ${rows} rows`);
      }
      for (const [key, value] of await reader.meta()) {
        await writer.setMeta(key, value);
        meta++;
      }
      for (const [key, value] of Object.entries(options.targetMeta ?? {})) await writer.setMeta(key, value);
    });
  });

  const files = { copied: 0, present: 0, bytes: 0, missing: [] as string[] };
  if (options.mirrors) {
    const { from, to } = options.mirrors;
    for (const [sha256, size] of mirrored) {
      if (await to.has(sha256)) {
        files.present++;
        continue;
      }
      const file = await from.open(sha256);
      if (!file) {
        files.missing.push(sha256);
        continue;
      }
      // The target computes the SHA-256 of the bytes it stores and refuses a mismatch.
      const stored = await to.put(file.stream(), { expectedSha256: sha256, expectedSize: size >= 0 ? size : undefined });
      files.copied++;
      files.bytes += stored.size;
      progress(`file ${sha256.slice(0, 12)}…: ${stored.size} bytes`);
    }
  }

  const tables = await compare(source, target, columns);
  return {
    source: source.label,
    target: target.label,
    tables,
    meta,
    files,
    ok: tables.every((t) => t.same) && files.missing.length === 0,
  };
}

/** The source's columns, which the target must all have (same schema version on both sides). */
async function sharedColumns(source: RecordSide, target: RecordSide, table: string): Promise<string[]> {
  const columns = await source.columns(table);
  const targetColumns = new Set(await target.columns(table));
  const missing = columns.filter((c) => !targetColumns.has(c));
  if (missing.length) throw new Error(`${target.label} has no column ${missing.join(", ")} in ${table}: run the same gantry version on both sides`);
  return columns;
}

/** Reads both stores again and compares each table's rows. */
async function compare(source: RecordSide, target: RecordSide, columns: Map<string, string[]>): Promise<TableReport[]> {
  const digests = async (side: RecordSide) =>
    side.read(async (reader) => {
      const out = new Map<string, TableDigest>();
      for (const t of COPIED_TABLES) {
        const cols = columns.get(t.name)!;
        const digest = new TableDigest();
        for await (const page of reader.pages(t.name, t.key, cols)) digest.add(cols, page);
        out.set(t.name, digest);
      }
      return out;
    });
  const a = await digests(source);
  const b = await digests(target);
  return COPIED_TABLES.map((t) => {
    const x = a.get(t.name)!;
    const y = b.get(t.name)!;
    const sha256 = x.hex();
    return { table: t.name, source: x.rows, target: y.rows, sha256, same: x.rows === y.rows && sha256 === y.hex() };
  });
}

function isTrue(v: unknown): boolean {
  return v === true || v === 1 || v === "1" || v === "t" || v === "true";
}
