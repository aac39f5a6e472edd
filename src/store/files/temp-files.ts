/**
 * Temporary files of writes in progress (mirror uploads, sync downloads, S3 spools) and their clean-up. Each name
 * carries its writer's process tag, so the files of a writer that was killed can be removed at once, while a file
 * a live process is still writing is never touched, however old it is.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { makerOf, processTag } from "../../state/process-owner";

/** A fresh name for a temp file of this process: `h<host>-p<pid>-<time>-<random>.<suffix>`. */
export function tempFileName(suffix: string): string {
  return `${processTag()}-${Date.now()}-${randomBytes(8).toString("hex")}.${suffix}`;
}

/**
 * Removes from `dir` the files ending in one of `suffixes` whose writer is gone: its process no longer runs on
 * this host, or (a name without a tag of this host: another host, an older Gantry) nothing has touched the file
 * for `olderThanMs`. A file of a live process of this host stays, even one stalled for longer.
 */
export function sweepTempFiles(dir: string, suffixes: readonly string[], olderThanMs: number): void {
  if (!existsSync(dir)) return;
  const limit = Date.now() - olderThanMs;
  for (const name of readdirSync(dir)) {
    if (!suffixes.some((s) => name.endsWith(s))) continue;
    const path = join(dir, name);
    try {
      const maker = makerOf(name);
      if (maker === "dead" || (maker === "unknown" && statSync(path).mtimeMs < limit)) rmSync(path, { force: true });
    } catch {
      // Raced with another sweeper, or with the writer finishing: nothing to do.
    }
  }
}
