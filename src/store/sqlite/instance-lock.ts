/**
 * One process at a time owns a data dir: the server, or a command that must not run beside one (`restore`,
 * `store copy` from or into it). Ownership is an exclusive lock the operating system holds on
 * `<data dir>/gantry.lock` for as long as the process lives, so a SIGKILLed owner releases it with its death and
 * nothing stale is ever left to judge.
 *
 * Bun has no flock(2); the lock is taken through SQLite's file locking (fcntl on Unix, LockFileEx on Windows) on
 * a file of its own, held by one connection in `locking_mode = EXCLUSIVE`. That is the OS's lock, tied to the
 * process, not a row that would outlive it. SQLite also keeps two connections of one process apart, so a second
 * claim in the same process is refused too. Nothing else in the process may open gantry.lock: closing another
 * descriptor of the file would drop a POSIX lock.
 *
 * `gantry.pid` only says who holds the lock (for messages and service managers); it is written after the lock
 * is taken and is never what decides.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export function lockFilePath(dataDir: string): string {
  return join(dataDir, "gantry.lock");
}

export function pidFilePath(dataDir: string): string {
  return join(dataDir, "gantry.pid");
}

/** The data dir is owned by another process (a server, or a restore or copy under way). */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    /** From gantry.pid; null when it could not be read (the owner is between taking the lock and writing it). */
    readonly pid: number | null,
  ) {
    super(`${DataDirInUseError.holder(pid)} is using ${resolve(dataDir)}`);
    this.name = "DataDirInUseError";
  }

  /** "gantry (pid 123)", for the first words of a message. */
  static holder(pid: number | null): string {
    return pid ? `gantry (pid ${pid})` : "another gantry process";
  }

  get holder(): string {
    return DataDirInUseError.holder(this.pid);
  }
}

export interface DataDirLock {
  /** Gives the data dir back (removes gantry.pid, drops the lock). Exiting does the same, even by SIGKILL. */
  release(): void;
}

function readPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(pidFilePath(dataDir), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the data dir (created if missing) for this process, or throws DataDirInUseError at once: never waits.
 * Keep the returned object: the lock lives as long as its connection.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(lockFilePath(dataDir), { create: true, readwrite: true });
  try {
    // No waiting: the owner holds the lock for hours. A conflict is SQLITE_BUSY at the first statement that reads.
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    // No journal file beside the lock file: the one write below only makes SQLite take the exclusive lock.
    db.exec("PRAGMA journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS owner (pid INTEGER NOT NULL)");
    db.exec("DELETE FROM owner");
    db.query("INSERT INTO owner (pid) VALUES (?)").run(process.pid);
    // In EXCLUSIVE locking mode the lock is kept after the commit, until the connection closes.
    db.exec("COMMIT");
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === "SQLITE_BUSY") throw new DataDirInUseError(dataDir, readPid(dataDir));
    throw err;
  }
  writeFileSync(pidFilePath(dataDir), `${process.pid}\n`);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      // Only the lock's owner writes gantry.pid, so this one is ours.
      rmSync(pidFilePath(dataDir), { force: true });
      db.close();
    },
  };
}
