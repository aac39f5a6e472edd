/**
 * Marks a data dir as used by a running server (a pid file), so `gantry restore` can refuse to replace the
 * database under it. A pid file left by a crash is recognised as stale because its process is gone.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function lockPath(dataDir: string): string {
  return join(dataDir, "gantry.pid");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid of a live server using this data dir, or null. */
export function runningServerPid(dataDir: string): number | null {
  const path = lockPath(dataDir);
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : null;
}

export function claimDataDir(dataDir: string): () => void {
  const path = lockPath(dataDir);
  writeFileSync(path, String(process.pid));
  return () => {
    try {
      if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path);
    } catch {
      // already gone
    }
  };
}
