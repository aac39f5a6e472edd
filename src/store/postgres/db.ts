/**
 * Opening a PostgreSQL database for Gantry: a connection pool (Bun.sql), then the pending migrations, applied
 * by one instance at a time (an advisory lock held by the migrating transaction) so several instances
 * starting together do not race.
 */
import { SQL } from "bun";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations";

/** An arbitrary constant: the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK = 0x67616e74; // "gant"

export class PostgresSchemaTooNewError extends Error {
  constructor(found: number) {
    super(`the PostgreSQL database has schema version ${found}, but this gantry binary only knows up to ${SCHEMA_VERSION}; upgrade gantry`);
  }
}

export interface PostgresOptions {
  /** Pool size; each instance needs a few (requests, the ledger's commits, the change listener). */
  max?: number;
}

/** BIGINT and NUMERIC arrive as strings; every count Gantry keeps fits a double exactly (< 2^53). */
export function num(v: unknown): number {
  return typeof v === "number" ? v : Number(v);
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<SQL> {
  const sql = new SQL({ url, max: options.max ?? 10, idleTimeout: 60, connectionTimeout: 10 });
  try {
    await migrate(sql);
  } catch (err) {
    await sql.close();
    throw err;
  }
  return sql;
}

export async function schemaVersion(sql: SQL): Promise<number> {
  const rows = await sql`SELECT to_regclass('gantry_schema') IS NOT NULL AS present`;
  if (!rows[0].present) return 0;
  const [row] = await sql`SELECT version FROM gantry_schema`;
  return row ? num(row.version) : 0;
}

async function migrate(sql: SQL): Promise<void> {
  // Fast path: an up-to-date database needs no lock (every instance's start, every CLI command).
  const current = await schemaVersion(sql);
  if (current > SCHEMA_VERSION) throw new PostgresSchemaTooNewError(current);
  if (current === SCHEMA_VERSION) return;
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx.unsafe("CREATE TABLE IF NOT EXISTS gantry_schema (version INTEGER NOT NULL)");
    const [row] = await tx`SELECT version FROM gantry_schema`;
    let version = row ? num(row.version) : 0;
    if (!row) await tx`INSERT INTO gantry_schema (version) VALUES (0)`;
    if (version > SCHEMA_VERSION) throw new PostgresSchemaTooNewError(version);
    // Each migration runs in this one transaction (PostgreSQL's DDL is transactional): all or nothing.
    for (; version < SCHEMA_VERSION; version++) await tx.unsafe(MIGRATIONS[version]!);
    await tx`UPDATE gantry_schema SET version = ${version}`;
  });
}
