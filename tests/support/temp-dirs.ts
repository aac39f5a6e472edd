/**
 * Temporary directories that go away with the tests that made them. Call `tempDirs()` once at the top of a
 * test file (or of a describe block): it registers their removal in that scope's afterAll, so a failing
 * test cleans up too, and the system's temporary directory gains nothing from a run.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Returns a maker: `tempDir("ann")` creates `$TMPDIR/gantry-ann-XXXXXX` and removes it after the scope's tests. */
export function tempDirs(): (name: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (name) => {
    const dir = mkdtempSync(join(tmpdir(), `gantry-${name}-`));
    made.push(dir);
    return dir;
  };
}
