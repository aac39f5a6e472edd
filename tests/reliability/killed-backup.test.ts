/**
 * A `gantry backup` killed half-way leaves nothing under the name an operator would restore from (it used to
 * leave a partial SQLite file there, written by VACUUM INTO in place), and the next backup to that name clears
 * what the killed one left and succeeds. A real process, SIGKILL.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { BUN, MAIN, ROOT, runGantry } from "./serve-process";

const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const p of procs) {
    p.kill("SIGKILL");
    await p.exited;
  }
});
// Registered after the hook above, so it runs after it: the process is gone before its directories.
const tempDir = tempDirs();

/** Bytes of filler in the database: enough that writing the snapshot takes a while even on a fast disk. */
const FILLER_MIB = 256;

test("a backup killed mid-write leaves no file at its name; the next one clears the leftovers and succeeds", async () => {
  const dir = tempDir("killed-backup");
  expect((await runGantry(["keys", "create", "--name", "before-backup", "--data-dir", dir])).code).toBe(0);
  const db = new Database(join(dir, "gantry.db"));
  db.exec("CREATE TABLE filler (b BLOB)");
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILLER_MIB}) INSERT INTO filler SELECT randomblob(1048576) FROM n`);
  db.close();

  const out = tempDir("killed-backup-out");
  const target = join(out, "snapshot.db");
  const backup = Bun.spawn([BUN, MAIN, "backup", target, "--data-dir", dir], { cwd: ROOT, env: { PATH: process.env.PATH ?? "" }, stdout: "ignore", stderr: "ignore" });
  procs.push(backup);
  // Killed as soon as the snapshot has bytes on disk, whatever its name: far from done with 256 MiB to write.
  const written = () => readdirSync(out).map((n) => statSync(join(out, n), { throwIfNoEntry: false })?.size ?? 0);
  await pollUntil(written, (sizes) => sizes.some((s) => s > 0), { timeoutMs: 30_000, stepMs: 1, what: "the backup to start writing" });
  backup.kill("SIGKILL");
  await backup.exited;
  expect(backup.signalCode).toBe("SIGKILL");
  expect(existsSync(target)).toBe(false);

  const again = await runGantry(["backup", target, "--data-dir", dir]);
  expect(again.err).toBe("");
  expect(again.code).toBe(0);
  expect(readdirSync(out)).toEqual(["snapshot.db"]);
  const snap = new Database(target, { readonly: true });
  expect((snap.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
  expect((snap.query("SELECT COUNT(*) AS n FROM api_keys").get() as { n: number }).n).toBe(1);
  snap.close();
}, 120_000);
