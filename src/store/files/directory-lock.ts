/**
 * An exclusive flock(2) on a directory, for the data dir's one-owner rule on Unix. A lock on a directory cannot be
 * taken away by deleting a file beside it (a lock on `gantry.lock` could: delete the file and the next process
 * creates a new one and locks that); the directory cannot go while it holds the database without the database
 * going too. The kernel drops the lock when the process ends, even by SIGKILL, and the descriptor is opened
 * close-on-exec, so a child process never inherits it.
 *
 * flock locks belong to the open file description, not to the process: a second open of the directory in the
 * same process conflicts like another process would, and no other descriptor of the directory that the process
 * closes can drop it (unlike fcntl's POSIX locks, which is also why it never meets SQLite's own locks).
 *
 * Bun has no flock; it is called from libc through bun:ffi. Where that is not possible (Windows, a libc under
 * another name) `lockDirectory` answers "unsupported" and the caller uses its fallback.
 */
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, constants, openSync } from "node:fs";

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

type Flock = (fd: number, operation: number) => number;

let flock: Flock | null | undefined;

/** libc's flock, or null where it cannot be loaded (looked up once). */
function loadFlock(): Flock | null {
  if (flock !== undefined) return flock;
  flock = null;
  if (process.platform === "win32") return flock;
  const names = process.platform === "darwin" ? ["libc.dylib", "/usr/lib/libSystem.B.dylib"] : ["libc.so.6", "libc.so"];
  for (const name of names) {
    try {
      const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
      flock = (fd, operation) => lib.symbols.flock(fd, operation);
      break;
    } catch {
      // try the next name
    }
  }
  return flock;
}

export interface DirectoryLock {
  release(): void;
}

/** The lock, "busy" when another open description holds it, or "unsupported" on a platform without flock. */
export function lockDirectory(dir: string): DirectoryLock | "busy" | "unsupported" {
  const call = loadFlock();
  if (!call) return "unsupported";
  const fd = openSync(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  if (call(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    return "busy";
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      call(fd, LOCK_UN);
      closeSync(fd);
    },
  };
}
