/**
 * One process at a time owns a data dir: the server, or a command that must not run beside one (`restore`,
 * `store copy` from or into it). Ownership is an exclusive lock the operating system holds for as long as the
 * process lives, so a SIGKILLed owner releases it with its death and nothing stale is ever left to judge.
 *
 * On Unix the lock is an flock on the data dir itself (`files/directory-lock.ts`): nothing in the directory can
 * be deleted to take it away. It used to be a lock on a file of its own, `gantry.lock`, and deleting that file
 * under a running server let a second one start beside it (it created a new file and locked that).
 *
 * Where flock cannot be called (Windows), the lock is taken through SQLite's file locking (LockFileEx) on
 * `gantry.lock`, held by one connection in `locking_mode = EXCLUSIVE`; Windows refuses to delete a file that is
 * open. SQLite also keeps two connections of one process apart, so a second claim in the same process is
 * refused on either path.
 *
 * `gantry.pid` only says who holds the lock (for messages and service managers); it is written after the lock
 * is taken and is never what decides.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { lockDirectory } from "../files/directory-lock";

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
 * Keep the returned object: the lock lives as long as its descriptor (or connection).
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const dirLock = lockDirectory(dataDir);
  if (dirLock === "busy") throw new DataDirInUseError(dataDir, readPid(dataDir));
  const held = dirLock === "unsupported" ? lockFile(dataDir) : dirLock;
  writeFileSync(pidFilePath(dataDir), `${process.pid}\n`);
  let holding = true;
  return {
    release() {
      if (!holding) return;
      holding = false;
      // Only the lock's owner writes gantry.pid, so this one is ours.
      rmSync(pidFilePath(dataDir), { force: true });
      held.release();
    },
  };
}

/** The fallback where flock is not available: an exclusive SQLite lock on `gantry.lock`. */
function lockFile(dataDir: string): { release(): void } {
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
  return { release: () => db.close() };
}
