/** `gantry backup FILE` and `gantry restore FILE`. */
import { existsSync } from "node:fs";
import { databasePathOf } from "../deps";
import { backupDatabaseFile, restoreDatabase } from "../store/sqlite/backup";
import { DataDirInUseError, lockDataDir } from "../store/sqlite/instance-lock";
import type { Command } from "./command";
import { CommandError, STORE_SETTINGS, UsageError, configFrom, noDatabase } from "./common";

const MIRROR_NOTE = "The asset mirror (<data dir>/mirror) is plain files: copy it with cp -a or rsync.";

/** The one FILE argument, and the data dir's database path from the settings. */
function target(values: Record<string, unknown>, positionals: string[]) {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "needs a FILE" : `takes one FILE, got ${positionals.length}`);
  const config = configFrom(values);
  if (config.databaseUrl) {
    throw new CommandError(
      "the records are in PostgreSQL (GANTRY_DATABASE_URL): back them up with pg_dump and restore with pg_restore; gantry backup and restore handle the embedded SQLite database only",
    );
  }
  return { file: positionals[0], dataDir: config.dataDir, dbPath: databasePathOf(config) };
}

export const backupCommand: Command = {
  name: "backup",
  args: "FILE [--force]",
  summary: "consistent online snapshot of the database",
  details: `Writes a consistent snapshot of the database to FILE while the server keeps running (SQLite VACUUM INTO).
--force replaces an existing FILE.
${MIRROR_NOTE}`,
  options: { force: { type: "boolean" } },
  positionals: true,
  settings: STORE_SETTINGS,
  run: ({ values, positionals }) => {
    const { file, dataDir, dbPath } = target(values, positionals);
    if (!existsSync(dbPath)) throw noDatabase(dataDir);
    backupDatabaseFile(dbPath, file, values.force === true);
    process.stdout.write(`backed up ${dbPath} to ${file}\n`);
  },
};

export const restoreCommand: Command = {
  name: "restore",
  args: "FILE",
  summary: "put a snapshot back (refused while a server runs)",
  details: `Replaces the database with FILE after checking it; refused while a server uses the data dir.
The database it replaces is kept beside it as gantry.db.before-restore-<time>. Restoring into an empty data
dir creates the database there.
${MIRROR_NOTE}`,
  positionals: true,
  settings: STORE_SETTINGS,
  run: ({ values, positionals }) => {
    const { file, dataDir, dbPath } = target(values, positionals);
    // Held until the restore is done: no server may start on the database while it is replaced.
    let lock;
    try {
      lock = lockDataDir(dataDir);
    } catch (err) {
      if (err instanceof DataDirInUseError) throw new CommandError(`${err.message}: stop it before restoring`);
      throw err;
    }
    let kept;
    try {
      kept = restoreDatabase(file, dbPath);
    } finally {
      lock.release();
    }
    process.stdout.write(`restored ${file} to ${dbPath}${kept ? ` (the previous database is kept as ${kept})` : ""}\n`);
  },
};
