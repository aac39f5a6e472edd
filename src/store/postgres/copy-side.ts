/** A PostgreSQL database as one side of `gantry store copy`. */
import type { SQL } from "bun";
import { num, openPostgres } from "./db";
import { COPIED_TABLES, isCopiedMetaKey, type RecordReader, type RecordSide, type RecordWriter, type Row } from "../copy/tables";

const PAGE = 2000;
/** PostgreSQL takes at most 65535 parameters per statement. */
const MAX_PARAMS = 60_000;
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class PostgresSide implements RecordSide {
  readonly label: string;
  private types = new Map<string, Map<string, string>>();

  private constructor(private readonly sql: SQL, url: string) {
    const u = new URL(url);
    this.label = `PostgreSQL ${u.host}${u.pathname}`;
  }

  static async open(url: string): Promise<PostgresSide> {
    return new PostgresSide(await openPostgres(url, { max: 2 }), url);
  }

  /** Column name → data_type of `table` ("bigint", "boolean", "text", …), in table order. */
  private async columnTypes(table: string): Promise<Map<string, string>> {
    let types = this.types.get(table);
    if (!types) {
      const rows = await this.sql`SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`;
      types = new Map(rows.map((r: { column_name: string; data_type: string }) => [r.column_name, r.data_type]));
      this.types.set(table, types);
    }
    return types;
  }

  async columns(table: string): Promise<string[]> {
    return [...(await this.columnTypes(table)).keys()];
  }

  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of COPIED_TABLES) out[t.name] = num((await this.sql.unsafe(`SELECT count(*) AS n FROM ${quote(t.name)}`))[0].n);
    return out;
  }

  async read<T>(fn: (reader: RecordReader) => Promise<T>): Promise<T> {
    // One snapshot for every table, while the instances may go on writing.
    return (await this.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) =>
      fn({
        pages: (table, key, columns) => this.pages(tx, table, key, columns),
        meta: async () =>
          ((await tx`SELECT key, value FROM meta ORDER BY key`) as Array<{ key: string; value: string }>)
            .filter((r) => isCopiedMetaKey(r.key))
            .map((r) => [r.key, r.value] as [string, string]),
        lastIdentity: async (table, column) => {
          const [{ seq }] = await tx`SELECT pg_get_serial_sequence(${table}, ${column}) AS seq`;
          const [s] = await tx.unsafe(`SELECT last_value, is_called FROM ${seq}`);
          const [m] = await tx.unsafe(`SELECT COALESCE(MAX(${quote(column)}), 0) AS n FROM ${quote(table)}`);
          return Math.max(num(m.n), s.is_called ? num(s.last_value) : num(s.last_value) - 1);
        },
      }),
    )) as T;
  }

  private async *pages(tx: SQL, table: string, key: readonly string[], columns: string[]): AsyncIterable<Row[]> {
    const types = await this.columnTypes(table);
    // Text keys in byte order (collation "C"), as SQLite orders them, so both sides list rows alike.
    const ordered = key.map((k) => (types.get(k) === "text" ? `${quote(k)} COLLATE "C"` : quote(k)));
    const cols = columns.map(quote).join(", ");
    let after: unknown[] | null = null;
    for (;;) {
      const where = after ? `WHERE (${ordered.join(", ")}) > (${key.map((_, i) => `$${i + 1}`).join(", ")})` : "";
      const rows = (await tx.unsafe(`SELECT ${cols} FROM ${quote(table)} ${where} ORDER BY ${ordered.join(", ")} LIMIT ${PAGE}`, after ?? [])) as Row[];
      if (rows.length === 0) return;
      yield [...rows];
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1]!;
      after = key.map((k) => last[k]);
    }
  }

  async write(fn: (writer: RecordWriter) => Promise<void>): Promise<void> {
    await this.sql.begin(async (tx) => {
      await fn({
        clear: async () => {
          await tx.unsafe(`TRUNCATE ${COPIED_TABLES.map((t) => quote(t.name)).join(", ")} RESTART IDENTITY CASCADE`);
          for (const r of (await tx`SELECT key FROM meta`) as Array<{ key: string }>) {
            if (isCopiedMetaKey(r.key)) await tx`DELETE FROM meta WHERE key = ${r.key}`;
          }
        },
        insert: async (table, columns, rows) => {
          const types = await this.columnTypes(table);
          // Ids are kept (assets, download tokens and counts refer to them); usage_ledger's are GENERATED ALWAYS.
          const identity = COPIED_TABLES.find((t) => t.name === table)?.identity ? " OVERRIDING SYSTEM VALUE" : "";
          const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
          for (let at = 0; at < rows.length; at += perStatement) {
            const batch = rows.slice(at, at + perStatement);
            const params: unknown[] = [];
            const tuples = batch.map((row) => {
              const slots = columns.map((c) => {
                params.push(toPostgres(row[c], types.get(c)));
                return `$${params.length}`;
              });
              return `(${slots.join(", ")})`;
            });
            await tx.unsafe(`INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")})${identity} VALUES ${tuples.join(", ")}`, params);
          }
        },
        finishIdentity: async (table, column, last) => {
          await tx.unsafe(
            `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), GREATEST(COALESCE((SELECT max(${quote(column)}) FROM ${quote(table)}), 0), $1::bigint) + 1, false)`,
            [last],
          );
        },
        setMeta: async (key, value) => {
          await tx`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
        },
      });
    });
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}

/** SQLite keeps booleans as 0/1 and every integer as a number; PostgreSQL's columns want their own types. */
function toPostgres(v: unknown, type: string | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (type === "boolean") return typeof v === "boolean" ? v : Number(v) !== 0;
  if (type === "bigint" || type === "integer") return String(v);
  return v;
}
