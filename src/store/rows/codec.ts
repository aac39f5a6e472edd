/**
 * How one backend's driver hands columns over and takes them back. The row mappings of rows/ are written once
 * against this, and each backend passes its own: SQLite keeps flags as 0/1 and returns numbers as they are;
 * PostgreSQL has real booleans and returns BIGINT and NUMERIC as strings.
 */

/** A row as a driver returns it: column name to value. */
export type Row = Record<string, unknown>;

export interface ColumnCodec {
  /** A whole-number column read (every count Gantry keeps fits a double exactly). */
  num(v: unknown): number;
  /** The same, for a column that may be NULL. */
  numOrNull(v: unknown): number | null;
  /** A flag column read. */
  bool(v: unknown): boolean;
  /** A flag as the driver takes it in a write. */
  flag(b: boolean): boolean | number;
}
