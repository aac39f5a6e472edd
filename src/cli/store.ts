/**
 * `gantry store copy --to URL`: moves a deployment between the embedded store (SQLite and the data dir's
 * mirror) and the shared one (PostgreSQL, and the S3 bucket when one is set), either way.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { databasePathOf, openMirror } from "../deps";
import { FileSystemMirror } from "../store/files/fs-mirror";
import { DataDirInUseError, lockDataDir, type DataDirLock } from "../store/sqlite/instance-lock";
import { copyStore, type CopyReport } from "../store/copy/copy-store";
import { PostgresSide } from "../store/postgres/copy-side";
import { SqliteSide } from "../store/sqlite/copy-side";
import type { Mirror } from "../site/releases/mirror";
import { MIRROR_RECORD_KEY, encodeMirrorLocation } from "../site/downloads/rules/mirror-location";
import type { Group } from "./command";
import { CommandError, STORE_SETTINGS, UsageError, configFrom, noDatabase, printJson, table } from "./common";

const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\/\S+$/i.test(s);

/** Takes the embedded side's data dir for the copy: refused while a server uses it, and no server starts meanwhile. */
function takeDataDir(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new CommandError(`${err.message}: stop it first, so nothing is written there that the copy would miss`);
    throw err;
  }
}

/** Human-readable bytes for the summary line. */
function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function printReport(report: CopyReport, note: string | null): void {
  process.stdout.write(`${report.source} → ${report.target}\n`);
  process.stdout.write(
    table(
      report.tables.map((t) => ({ table: t.table, source: t.source, target: t.target, check: t.same ? "same rows" : "DIFFERENT" })),
      ["table", "source", "target", "check"],
    ) + "\n",
  );
  const f = report.files;
  process.stdout.write(`meta: ${report.meta} values\n`);
  process.stdout.write(`files: ${f.copied} copied (${size(f.bytes)}), ${f.present} already there, ${f.missing.length} missing\n`);
  for (const sha of f.missing) process.stdout.write(`  missing in the source mirror: ${sha}\n`);
  if (note) process.stdout.write(`${note}\n`);
}

export const storeGroup: Group = {
  name: "store",
  summary: "move a deployment between the embedded store and PostgreSQL/S3 (copy)",
  commands: [
    {
      name: "store copy",
      args: "--to URL [--force] [--json]",
      summary: "copy every record and asset file from this store into another, then check both hold the same",
      details: `Moving up: from the data dir's SQLite database and mirror (the settings in use) to
  --to postgres://user:password@host:port/db, and the asset files into the S3 bucket of --s3-bucket (with the
  other --s3-* settings); without a bucket the files stay in the data dir's mirror.
Moving back: from --database-url (and --s3-bucket, else the data dir's mirror) to --to DIR, a data dir whose
  gantry.db and mirror are created.
The records are read from one snapshot and written in one transaction; then both stores are read again and
each table's rows compared (count and SHA-256), and every file is checked against its SHA-256 as it is written.
Exit 0 when everything is the same on both sides, 1 otherwise. A target that holds records is refused unless
--force (its records are replaced). Stop the servers of an embedded source first (the copy refuses while one
runs there); point new servers at the target afterwards.`,
      options: { to: { type: "string" }, force: { type: "boolean" }, json: { type: "boolean" } },
      settings: STORE_SETTINGS,
      run: async ({ values }) => {
        const to = values.to;
        if (typeof to !== "string" || to === "") throw new UsageError("needs --to URL (postgres://… to move up, a data dir to move back)");
        const config = configFrom(values);
        let source: SqliteSide | PostgresSide | null = null;
        let target: SqliteSide | PostgresSide | null = null;
        let mirrors: { from: Mirror; to: Mirror } | undefined;
        let note: string | null = null;
        let lock: DataDirLock | null = null;
        try {
          if (!config.databaseUrl) {
            if (!isPostgresUrl(to)) throw new UsageError("the source is the embedded store: --to must be a postgres:// URL (copy a data dir with gantry backup)");
            const path = databasePathOf(config);
            if (!existsSync(path)) throw noDatabase(config.dataDir);
            lock = takeDataDir(config.dataDir);
            source = new SqliteSide(path, false);
            target = await PostgresSide.open(to);
            if (config.s3Bucket) {
              mirrors = { from: new FileSystemMirror(join(config.dataDir, "mirror")), to: await openMirror(config) };
            } else {
              note = `no --s3-bucket: the asset files stay in ${resolve(config.dataDir, "mirror")}; every instance needs them in its own data dir`;
            }
          } else {
            if (isPostgresUrl(to)) throw new UsageError("the source is PostgreSQL (--database-url): --to must be a data dir (copy between PostgreSQL databases with pg_dump)");
            if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to)) throw new UsageError(`--to must be a postgres:// URL or a data dir, not ${to.split("://")[0]}://`);
            lock = takeDataDir(to);
            source = await PostgresSide.open(config.databaseUrl);
            target = new SqliteSide(join(to, "gantry.db"), true);
            const sameDir = !config.s3Bucket && resolve(config.dataDir) === resolve(to);
            if (!sameDir) mirrors = { from: await openMirror(config), to: new FileSystemMirror(join(to, "mirror")) };
          }
          const report = await copyStore(source, target, {
            force: values.force === true,
            mirrors,
            // The files go into another mirror: the target's note of where they are names that one, not the source's.
            targetMeta: mirrors ? { [MIRROR_RECORD_KEY]: encodeMirrorLocation(mirrors.to.location) } : undefined,
            onProgress: process.stderr.isTTY ? (line) => process.stderr.write(`${line}\n`) : undefined,
          });
          if (values.json === true) printJson({ ...report, note });
          else printReport(report, note);
          if (!report.ok) throw new CommandError("the copy is not exact: see the lines above (the target keeps what was written)");
        } finally {
          await source?.close();
          await target?.close();
          lock?.release();
        }
      },
    },
  ],
};
