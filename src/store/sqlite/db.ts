/**
 * Opens the SQLite database: WAL (so the CLI and a running server share it), foreign keys on,
 * a busy timeout instead of immediate SQLITE_BUSY, and the embedded migrations applied.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations";
// Registers SQLite's classification of its errors with the storage-error seam.
import "./storage-errors";

export class SchemaTooNewError extends Error {
  constructor(found: number) {
    super(
      `the database has schema version ${found}, but this gantry binary only knows up to ${SCHEMA_VERSION}; ` +
        `it was written by a newer gantry. Run the newer binary (or restore a backup) instead of this one.`,
    );
    this.name = "SchemaTooNewError";
  }
}

/** Opening with `existingOnly` found no database file: nothing was created. */
export class DatabaseMissingError extends Error {
  constructor(readonly path: string) {
    super(`no database at ${path}`);
    this.name = "DatabaseMissingError";
  }
}

export interface OpenOptions {
  /**
   * Open only a database that exists: the CLI's maintenance commands use it so that a wrong data dir is an
   * error instead of a new, empty database in the wrong place.
   */
  existingOnly?: boolean;
  /** Runs before pending migrations are applied to an existing database. Default: a backup file beside it. */
  beforeMigrate?: (db: Database, from: number, to: number) => void;
}

/** The default before an upgrade: a consistent copy of the old database next to it, e.g. gantry.db.pre-v4-20261122T110500Z.bak. */
export function backupBeforeMigrate(path: string): NonNullable<OpenOptions["beforeMigrate"]> {
  return (db, from, to) => {
    if (path === ":memory:") return;
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    const target = `${path}.pre-v${to}-from-v${from}-${stamp}.bak`;
    db.query("VACUUM INTO ?").run(target);
  };
}

export function openDatabase(path: string, options: OpenOptions = {}): Database {
  if (path !== ":memory:" && options.existingOnly && !existsSync(path)) throw new DatabaseMissingError(path);
  if (path !== ":memory:" && !options.existingOnly) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: !options.existingOnly, readwrite: true, strict: true });
  db.exec("PRAGMA busy_timeout = 5000");
  if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  try {
    migrate(db, { beforeMigrate: backupBeforeMigrate(path), ...options });
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

function migrate(db: Database, options: OpenOptions): void {
  const current = schemaVersion(db);
  if (current > SCHEMA_VERSION) throw new SchemaTooNewError(current);
  if (current === SCHEMA_VERSION) return;
  if (current > 0) options.beforeMigrate?.(db, current, SCHEMA_VERSION);
  for (let v = current; v < SCHEMA_VERSION; v++) {
    // Each migration and its version bump commit together, so a crash leaves a consistent schema.
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }).immediate();
  }
}
