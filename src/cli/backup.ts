/** `gantry backup FILE` and `gantry restore FILE`. */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { databasePathOf } from "../deps";
import { BackupError, backupDatabase, restoreDatabase } from "../store/backup";
import { runningServerPid } from "../store/instance-lock";
import { UsageError, configFrom, parse, settingsHelp } from "./common";

const HELP = `Usage: gantry backup FILE [--force] [settings]
       gantry restore FILE [settings]

backup   writes a consistent snapshot of the database to FILE while the server keeps running (SQLite VACUUM INTO).
restore  replaces the database with FILE after checking it; refused while a server uses the data dir.
         The database it replaces is kept beside it as gantry.db.before-restore-<time>.
The asset mirror (<data dir>/mirror) is plain files: copy it with cp -a or rsync.

Settings:
${settingsHelp()}`;

export async function backupCommand(args: string[], mode: "backup" | "restore"): Promise<number> {
  const { values, positionals } = parse(args, { force: { type: "boolean" } });
  if (values.help) return void process.stdout.write(HELP + "\n"), 0;
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError(`gantry ${mode} needs exactly one FILE`);
  const config = configFrom(values);
  const dbPath = databasePathOf(config);
  try {
    if (mode === "backup") {
      if (!existsSync(dbPath)) throw new BackupError(`no database at ${dbPath}`);
      const db = new Database(dbPath);
      try {
        db.exec("PRAGMA busy_timeout = 5000");
        backupDatabase(db, file, values.force === true);
      } finally {
        db.close();
      }
      process.stdout.write(`backed up ${dbPath} to ${file}\n`);
      return 0;
    }
    const pid = runningServerPid(config.dataDir);
    if (pid) throw new BackupError(`a gantry server (pid ${pid}) is using ${config.dataDir}: stop it before restoring`);
    const kept = restoreDatabase(file, dbPath);
    process.stdout.write(`restored ${file} to ${dbPath}${kept ? ` (the previous database is kept as ${kept})` : ""}\n`);
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      process.stderr.write(`gantry ${mode}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
