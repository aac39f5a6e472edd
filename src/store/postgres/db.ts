/**
 * Opening a PostgreSQL database for Gantry: a connection pool (Bun.sql), then the pending migrations, applied
 * by one instance at a time (an advisory lock held by the migrating transaction) so several instances
 * starting together do not race.
 */
import { SQL } from "bun";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations";
import { postgresConnectError } from "./connect-errors";
import { isConnectionLoss } from "./storage-errors";

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

const DEFAULT_POOL_SIZE = 10;

/**
 * Runs `op` and, if the connection was lost under it, again: each dead idle connection of the pool fails once
 * and is dropped, so up to `attempts` tries (the pool's size and one) reach a live or a new connection.
 */
export async function retryOnConnectionLoss<T>(op: () => Promise<T>, attempts = DEFAULT_POOL_SIZE + 1): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!isConnectionLoss(err) || attempt >= attempts) throw err;
    }
  }
}


/**
 * The pool, with every statement and transaction sent through it tried once more when its connection turns
 * out to be dead, until one is alive. After a PostgreSQL restart (or a failover, or a proxy's idle cut) each idle pooled connection
 * fails its next statement once, which would otherwise turn into a 503 for as many requests as the pool has
 * connections. A transaction is rolled back by the loss, so running it again is safe; statements inside a
 * transaction are not retried one by one. Helper calls (`sql(rows)`) and everything else pass through.
 */
export function retryingPool(sql: SQL, poolSize = DEFAULT_POOL_SIZE): SQL {
  const attempts = poolSize + 1;
  return new Proxy(sql, {
    apply(target, thisArg, args) {
      const first = args[0];
      if (!(Array.isArray(first) && "raw" in first)) return Reflect.apply(target, thisArg, args);
      return retryOnConnectionLoss(() => Reflect.apply(target, thisArg, args) as Promise<unknown>, attempts);
    },
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "begin" || prop === "transaction" || prop === "unsafe") {
        return (...args: unknown[]) => retryOnConnectionLoss(() => value.apply(target, args), attempts);
      }
      return value.bind(target);
    },
  });
}

/** Seconds to establish a connection (TCP, TLS and the startup exchange) before giving up on it. */
export const CONNECT_TIMEOUT_SECONDS = 10;

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<SQL> {
  const max = options.max ?? DEFAULT_POOL_SIZE;
  const raw = new SQL({ url, max, idleTimeout: 60, connectionTimeout: CONNECT_TIMEOUT_SECONDS });
  const sql = retryingPool(raw, max);
  try {
    // One try, outside the retrying pool: a server that is down or does not answer fails the start within the
    // connect timeout, named, instead of once per pooled connection (eleven timeouts, almost two minutes).
    await raw`SELECT 1`.catch((err) => {
      throw postgresConnectError(url, err, CONNECT_TIMEOUT_SECONDS);
    });
    await migrate(sql).catch((err) => {
      throw isConnectionLoss(err) ? postgresConnectError(url, err, CONNECT_TIMEOUT_SECONDS) : err;
    });
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
