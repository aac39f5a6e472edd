/** PostgreSQL's column codec (store/rows/codec.ts): BIGINT and NUMERIC arrive as strings, flags are booleans. */
import type { ColumnCodec } from "../rows/codec";
import { num, numOrNull } from "./db";

export const postgresColumns: ColumnCodec = {
  num,
  numOrNull,
  bool: (v) => v === true,
  flag: (b) => b,
};
