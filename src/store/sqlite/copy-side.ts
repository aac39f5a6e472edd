/** The embedded store as one side of `gantry store copy`. */
import type { Database } from "bun:sqlite";
import { openDatabase } from "./db";
import { SqliteClientRepository } from "./clients";
import { RECOUNT_TOTALS } from "./stored-responses";
import { COPIED_TABLES, isCopiedMetaKey, type RecordReader, type RecordSide, type RecordWriter, type Row } from "../copy/tables";

const PAGE = 2000;
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class SqliteSide implements RecordSide {
  readonly label: string;
  private readonly db: Database;

  /** `create`: the target of a copy back from PostgreSQL may not exist yet. */
  constructor(path: string, create: boolean) {
    this.db = openDatabase(path, { existingOnly: !create });
    this.label = `SQLite ${path}`;
  }

  async columns(table: string): Promise<string[]> {
    return (this.db.query(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string }>).map((c) => c.name);
  }

  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of COPIED_TABLES) out[t.name] = (this.db.query(`SELECT count(*) AS n FROM ${quote(t.name)}`).get() as { n: number }).n;
    // Heartbeats still in the journal are clients too (a server folds them within a second).
    out.clients += (this.db.query("SELECT count(DISTINCT client_id) AS n FROM heartbeat_journal").get() as { n: number }).n;
    return out;
  }

  async read<T>(fn: (reader: RecordReader) => Promise<T>): Promise<T> {
    // Journalled heartbeats become client rows first, so none is left behind.
    new SqliteClientRepository(this.db).foldNow();
    // One read transaction: every table from the same moment (WAL keeps the snapshot while writers go on).
    this.db.exec("BEGIN");
    try {
      return await fn({
        pages: (table, key, columns) => this.pages(table, key, columns),
        meta: async () =>
          (this.db.query("SELECT key, value FROM meta ORDER BY key").all() as Array<{ key: string; value: string }>)
            .filter((r) => isCopiedMetaKey(r.key))
            .map((r) => [r.key, r.value] as [string, string]),
        lastIdentity: async (table, column) => {
          const max = (this.db.query(`SELECT COALESCE(MAX(${quote(column)}), 0) AS n FROM ${quote(table)}`).get() as { n: number }).n;
          return Math.max(max, this.sequence(table) ?? 0);
        },
      });
    } finally {
      this.db.exec("COMMIT");
    }
  }

  /** The AUTOINCREMENT counter of `table`, or null when it has none (yet). */
  private sequence(table: string): number | null {
    if (!this.db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'").get()) return null;
    return (this.db.query("SELECT seq FROM sqlite_sequence WHERE name = ?").get(table) as { seq: number } | null)?.seq ?? null;
  }

  private autoincrement(table: string): boolean {
    const row = this.db.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string } | null;
    return /\bAUTOINCREMENT\b/i.test(row?.sql ?? "");
  }

  private async *pages(table: string, key: readonly string[], columns: string[]): AsyncIterable<Row[]> {
    const cols = columns.map(quote).join(", ");
    const keys = key.map(quote).join(", ");
    const first = this.db.query(`SELECT ${cols} FROM ${quote(table)} ORDER BY ${keys} LIMIT ${PAGE}`);
    const next = this.db.query(
      `SELECT ${cols} FROM ${quote(table)} WHERE (${keys}) > (${key.map(() => "?").join(", ")}) ORDER BY ${keys} LIMIT ${PAGE}`,
    );
    let rows = first.all() as Row[];
    while (rows.length > 0) {
      yield rows;
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1]!;
      rows = next.all(...(key.map((k) => last[k]) as Array<string | number>)) as Row[];
    }
  }

  async write(fn: (writer: RecordWriter) => Promise<void>): Promise<void> {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      await fn({
        clear: async () => {
          for (const t of [...COPIED_TABLES].reverse()) this.db.exec(`DELETE FROM ${quote(t.name)}`);
          this.db.exec("DELETE FROM heartbeat_journal");
          for (const { key } of this.db.query("SELECT key FROM meta").all() as Array<{ key: string }>) {
            if (isCopiedMetaKey(key)) this.db.query("DELETE FROM meta WHERE key = ?").run(key);
          }
        },
        insert: async (table, columns, rows) => {
          const stmt = this.db.query(`INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
          // PostgreSQL's BIGINT strings become integers by the columns' INTEGER affinity; booleans bind as 1/0.
          for (const row of rows) stmt.run(...(columns.map((c) => row[c] ?? null) as Array<string | number | boolean | null>));
        },
        // INTEGER PRIMARY KEY continues after the largest id by itself.
        // Only AUTOINCREMENT tables keep a counter (sqlite_sequence); the others hand out the largest id + 1 anyway.
        finishIdentity: async (table, _column, last) => {
          if (!this.autoincrement(table)) return;
          if (this.sequence(table) === null) this.db.query("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)").run(table, last);
          else this.db.query("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ?").run(last, table);
        },
        setMeta: async (key, value) => {
          this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
        },
      });
      // Kept responses' totals are added by the repository as it writes them, not by a trigger (migration 21).
      this.db.exec(RECOUNT_TOTALS);
      this.db.exec("COMMIT");
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
