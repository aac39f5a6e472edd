/** SQLite's column codec (store/rows/codec.ts): numbers come back as numbers, flags are stored as 0 and 1. */
import type { ColumnCodec } from "../rows/codec";

export const sqliteColumns: ColumnCodec = {
  num: (v) => v as number,
  numOrNull: (v) => v as number | null,
  bool: (v) => v === 1,
  flag: (b) => (b ? 1 : 0),
};
