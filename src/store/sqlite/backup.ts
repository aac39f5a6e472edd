/**
 * Online backups and restores of the SQLite database. `VACUUM INTO` writes a consistent snapshot while other
 * connections (a running server) keep reading and writing; a restore checks the file before it replaces anything.
 */
import { Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { makerOf, processTag } from "../../state/process-owner";
import { SCHEMA_VERSION } from "./migrations";

export class BackupError extends Error {}

/** `.<file>.h<host>-p<pid>.backup-part`: a backup being written, beside its target. */
const TEMP_SUFFIX = ".backup-part";
/** The temp file and the rollback journal SQLite keeps beside it while writing. */
const TEMP_FILE_RE = /\.backup-part(-journal)?$/;

/**
 * Writes a snapshot of `db` to `target`. The snapshot is written under a temporary name beside `target`, synced
 * to disk and only then renamed into place, so a backup killed half-way (or a full disk) never leaves a partial
 * file under the name an operator will restore from. Temporary files of backups whose process is gone are
 * removed first.
 */
export function backupDatabase(db: Database, target: string, overwrite = false): void {
  if (existsSync(target) && !overwrite) throw new BackupError(`${target} exists already (use --force to replace it)`);
  const dir = dirname(resolve(target));
  const prefix = `.${basename(target)}.`;
  for (const name of readdirSync(dir)) {
    if (name.startsWith(prefix) && TEMP_FILE_RE.test(name) && makerOf(name) === "dead") rmSync(join(dir, name), { force: true });
  }
  const temp = join(dir, `${prefix}${processTag()}${TEMP_SUFFIX}`);
  const clear = () => {
    for (const path of [temp, `${temp}-journal`]) rmSync(path, { force: true });
  };
  clear();
  try {
    db.query("VACUUM INTO ?").run(temp);
    // VACUUM INTO does not sync its output: without this, a crash after the rename could leave a torn file.
    syncFile(temp);
    if (overwrite) renameSync(temp, target);
    else {
      // A link fails if the name was taken meanwhile, where a rename would replace it.
      try {
        linkSync(temp, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new BackupError(`${target} exists already (use --force to replace it)`);
        throw err;
      }
      rmSync(temp, { force: true });
    }
    syncDirectory(dir);
  } finally {
    clear();
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the rename durable. Not every platform can open a directory (Windows): there the rename is all we get. */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory.
  } finally {
    closeSync(fd);
  }
}

/**
 * A snapshot of the database file at `dbPath` (which must exist) while a server may be using it: a connection of
 * its own that waits up to 5 s for the server's write lock, closed afterwards.
 */
export function backupDatabaseFile(dbPath: string, target: string, overwrite = false): void {
  const db = new Database(dbPath, { create: false, readwrite: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    backupDatabase(db, target, overwrite);
  } finally {
    db.close();
  }
}

/** Checks that `file` is a healthy Gantry database this binary can run; returns its schema version. */
export function inspectBackup(file: string): number {
  if (!existsSync(file)) throw new BackupError(`${file} does not exist`);
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (err) {
    throw new BackupError(`${file} is not a SQLite database: ${(err as Error).message}`);
  }
  try {
    const check = db.query("PRAGMA integrity_check").get() as { integrity_check: string } | null;
    if (check?.integrity_check !== "ok") throw new BackupError(`${file} fails its integrity check: ${check?.integrity_check}`);
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const hasKeys = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'api_keys'").get();
    if (!hasKeys || version < 1) throw new BackupError(`${file} is not a Gantry database`);
    if (version > SCHEMA_VERSION) {
      throw new BackupError(`${file} has schema version ${version}, newer than this binary (${SCHEMA_VERSION}): restore it with a newer gantry`);
    }
    return version;
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${file} cannot be read: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/**
 * Replaces the database at `dbPath` with `file`. The current database (if any) is kept as
 * `<dbPath>.before-restore-<stamp>`; the copy lands under a temporary name and is renamed into place.
 */
export function restoreDatabase(file: string, dbPath: string, stamp = new Date().toISOString().replace(/[-:.]/g, "")): string | null {
  inspectBackup(file);
  let kept: string | null = null;
  if (existsSync(dbPath)) {
    kept = `${dbPath}.before-restore-${stamp}`;
    const current = new Database(dbPath);
    try {
      current.query("VACUUM INTO ?").run(kept);
    } finally {
      current.close();
    }
  }
  const temp = `${dbPath}.restoring`;
  copyFileSync(file, temp);
  for (const suffix of ["-wal", "-shm"]) rmSync(dbPath + suffix, { force: true });
  renameSync(temp, dbPath);
  return kept;
}
