/** `gantry backup FILE` and `gantry restore FILE`. */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { databasePathOf } from "../deps";
import { backupDatabase, restoreDatabase } from "../store/backup";
import { runningServerPid } from "../store/instance-lock";
import type { Command } from "./command";
import { CommandError, STORE_SETTINGS, UsageError, configFrom, noDatabase } from "./common";

const MIRROR_NOTE = "The asset mirror (<data dir>/mirror) is plain files: copy it with cp -a or rsync.";

function oneFile(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "needs a FILE" : `takes one FILE, got ${positionals.length}`);
  return positionals[0];
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
    const file = oneFile(positionals);
    const config = configFrom(values);
    const dbPath = databasePathOf(config);
    if (!existsSync(dbPath)) throw noDatabase(config.dataDir);
    const db = new Database(dbPath, { create: false, readwrite: true });
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      backupDatabase(db, file, values.force === true);
    } finally {
      db.close();
    }
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
    const file = oneFile(positionals);
    const config = configFrom(values);
    const dbPath = databasePathOf(config);
    const pid = runningServerPid(config.dataDir);
    if (pid) throw new CommandError(`a gantry server (pid ${pid}) is using ${config.dataDir}: stop it before restoring`);
    const kept = restoreDatabase(file, dbPath);
    process.stdout.write(`restored ${file} to ${dbPath}${kept ? ` (the previous database is kept as ${kept})` : ""}\n`);
  },
};
