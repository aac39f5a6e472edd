/**
 * What `gantry store copy` moves between the embedded store (SQLite) and PostgreSQL: the record tables, which
 * have the same names, columns and meanings in both schemas, and the small named values in `meta`. Each side
 * of a copy is a `RecordSide`; the copy itself (copy-store.ts) only speaks this interface.
 */

/** Parents before children, so foreign keys hold at every insert. */
export const COPIED_TABLES: ReadonlyArray<{ name: string; key: readonly string[]; identity?: string }> = [
  { name: "api_keys", key: ["id"] },
  { name: "key_usage", key: ["key_id"] },
  { name: "usage_ledger", key: ["id"], identity: "id" },
  { name: "releases", key: ["id"], identity: "id" },
  { name: "release_assets", key: ["id"], identity: "id" },
  { name: "download_tokens", key: ["token_hash"] },
  { name: "download_counts", key: ["asset_id", "day"] },
  { name: "announcements", key: ["id"], identity: "id" },
  { name: "clients", key: ["client_id"] },
  { name: "online_series", key: ["minute"] },
  { name: "stored_responses", key: ["id"] },
  { name: "stored_items", key: ["response_id", "position"] },
  { name: "upstream_refused_params", key: ["upstream", "model", "param"] },
];

/**
 * `meta` keys that belong to one database and are not copied: the change counters SQLite's triggers move
 * (the target keeps its own; they only have to move).
 */
export function isCopiedMetaKey(key: string): boolean {
  return !key.endsWith("_generation");
}

export type Row = Record<string, unknown>;

/** Reads a consistent snapshot of one store. */
export interface RecordReader {
  /** The table's rows in key order, a page at a time. */
  pages(table: string, key: readonly string[], columns: string[]): AsyncIterable<Row[]>;
  meta(): Promise<Array<[string, string]>>;
  /**
   * The largest id the store has handed out in an identity column, deleted rows included where it remembers them
   * (SQLite's AUTOINCREMENT counter, a PostgreSQL sequence): asset ids must never be handed out again, after a copy
   * either.
   */
  lastIdentity(table: string, column: string): Promise<number>;
}

/** Writes into one store, inside the one transaction `RecordSide.write` opened. */
export interface RecordWriter {
  /** Empties the copied tables and the copied meta keys (only with --force). */
  clear(): Promise<void>;
  insert(table: string, columns: string[], rows: Row[]): Promise<void>;
  /** After explicit ids went into an identity column: the next generated id follows the largest and `last`. */
  finishIdentity(table: string, column: string, last: number): Promise<void>;
  setMeta(key: string, value: string): Promise<void>;
}

export interface RecordSide {
  /** For messages: "SQLite /srv/gantry/data/gantry.db", "PostgreSQL db.example.com:5432/gantry". */
  readonly label: string;
  /** The table's column names. */
  columns(table: string): Promise<string[]>;
  /** Rows per copied table (0 everywhere: an empty store). */
  counts(): Promise<Record<string, number>>;
  read<T>(fn: (reader: RecordReader) => Promise<T>): Promise<T>;
  write(fn: (writer: RecordWriter) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * One form for a value whatever the backend returned: PostgreSQL gives BIGINT as a string and BOOLEAN as
 * true/false, SQLite gives numbers and 0/1. Two stores hold the same records exactly when their rows, in
 * key order and in this form, are the same.
 */
export function canonicalValue(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean") return v ? "1" : "0";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  return String(v);
}

/** SHA-256 over the rows' canonical values, in order. */
export class TableDigest {
  private readonly hasher = new Bun.CryptoHasher("sha256");
  rows = 0;

  add(columns: string[], rows: Row[]): void {
    for (const row of rows) {
      this.hasher.update(JSON.stringify(columns.map((c) => canonicalValue(row[c]))));
      this.hasher.update("\n");
      this.rows++;
    }
  }

  hex(): string {
    return this.hasher.digest("hex");
  }
}
