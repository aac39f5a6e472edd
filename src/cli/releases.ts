/** `gantry releases ...`: publish, sync, list, delete (plus update, classify) — the same rules as /admin/api/releases. */
import { AppError } from "../errors";
import { parsePublishArgument } from "../site/release-catalog";
import { assetView, releaseView, sortNewestFirst } from "../site/release-view";
import { formatBytes, terminalProgress } from "../site/sync-progress";
import type { SyncReport } from "../site/sync-service";
import { UsageError, commandDeps, configFrom, parse, printJson, settingsHelp, table } from "./common";

const OPTIONS = {
  notes: { type: "string" },
  "min-app-version": { type: "string" },
  prerelease: { type: "boolean" },
  "no-prerelease": { type: "boolean" },
  "published-at": { type: "string" },
  github: { type: "string" },
  "api-url": { type: "string" },
  token: { type: "string" },
  prereleases: { type: "boolean" },
  platform: { type: "string" },
  arch: { type: "string" },
  "file-type": { type: "string" },
  json: { type: "boolean" },
} as const;

export const RELEASES_HELP = `Usage: gantry releases <command> [options]

Commands:
  publish VERSION FILE... [--notes TEXT] [--min-app-version V] [--prerelease] [--published-at ISO] [--json]
      FILE is a local path (copied into the mirror; SHA-256 computed from the copied bytes) or NAME=URL
      (an asset known only by its upstream address, served by proxy; an empty URL makes it unavailable).
      Publishing to an existing version adds the files (a file of the same name is replaced).
  sync --github OWNER/REPO [--api-url URL] [--token TOKEN] [--prereleases] [--json]
      mirrors releases and assets from GitHub Releases (or a compatible API), with a progress bar on a terminal.
      The token may also come from GANTRY_SYNC_TOKEN.
  list [--json]
  delete VERSION
  update VERSION [--notes TEXT] [--min-app-version V] [--prerelease | --no-prerelease] [--published-at ISO] [--json]
  classify VERSION ASSET [--platform P] [--arch A] [--file-type T] [--json]
      overrides the classification derived from the file name (ASSET is an asset id or name)

Settings (every command):
${settingsHelp()}`;

type Values = Record<string, string | boolean | undefined>;

function meta(values: Values) {
  if (values.prerelease && values["no-prerelease"]) throw new UsageError("--prerelease and --no-prerelease exclude each other");
  return {
    notes: values.notes as string | undefined,
    minAppVersion: values["min-app-version"] as string | undefined,
    prerelease: values.prerelease ? true : values["no-prerelease"] ? false : undefined,
    publishedAt: values["published-at"] as string | undefined,
  };
}

/** Operator mistakes (bad version, missing file, bad URL) are usage errors: exit code 2. */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AppError && err.status === 400) throw new UsageError(err.message);
    throw err;
  }
}

function printSyncReport(r: SyncReport): void {
  const out: string[] = [];
  if (r.status === "failed") out.push(`Sync of ${r.repo} failed: ${r.error}. Nothing was changed.`);
  else {
    out.push(
      r.unchanged
        ? `${r.repo}: release list unchanged since the last sync (${r.pagesNotModified} page(s) not modified).`
        : `${r.repo}: read ${r.pagesFetched} page(s), ${r.pagesNotModified} not modified.`,
    );
    if (r.releasesCreated.length) out.push(`  new releases: ${r.releasesCreated.join(", ")}`);
    if (r.releasesUpdated.length) out.push(`  updated releases: ${r.releasesUpdated.join(", ")}`);
    out.push(`  assets: ${r.assetsAdded} added, ${r.assetsUpdated} updated`);
    const bytes = r.downloaded.reduce((n, d) => n + d.bytes, 0);
    out.push(`  downloaded: ${r.downloaded.length} file(s), ${formatBytes(bytes)}${r.reused.length ? `; ${r.reused.length} already mirrored` : ""}`);
    for (const f of r.failed) out.push(`  not mirrored (keeps its upstream address): ${f.version} ${f.name}: ${f.error}`);
    for (const s of r.skipped) out.push(`  skipped ${s.tag}: ${s.reason}`);
  }
  process.stdout.write(out.join("\n") + "\n");
}

export async function releasesCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, OPTIONS as any) as { values: Values; positionals: string[] };
  if (!sub || values.help) {
    process.stdout.write(RELEASES_HELP + "\n");
    return sub ? 0 : 2;
  }
  if (!["publish", "sync", "list", "delete", "update", "classify"].includes(sub)) {
    throw new UsageError(`unknown command 'gantry releases ${sub}'`);
  }
  const deps = commandDeps(configFrom(values));
  const { catalog, store } = deps.releases;
  const show = (version: string) => {
    const v = releaseView(catalog.find(version));
    if (values.json) printJson(v);
    else {
      process.stdout.write(`${v.version}  published ${v.publishedAt}  minAppVersion ${v.minAppVersion || "-"}${v.prerelease ? "  (pre-release)" : ""}\n`);
      const rows = v.assets.map((a) => ({ ...a, sha256: a.sha256 ? a.sha256.slice(7, 19) + "…" : "" }));
      if (rows.length) process.stdout.write(table(rows, ["id", "name", "platform", "arch", "fileType", "size", "source", "sha256"]) + "\n");
    }
  };
  try {
    switch (sub) {
      case "publish": {
        const [version, ...files] = positionals;
        if (!version || files.length === 0) throw new UsageError("usage: gantry releases publish VERSION FILE... (see --help)");
        const sources = asUsage(() => files.map(parsePublishArgument));
        const release = await catalog.publish(version, sources, meta(values)).catch((err) => {
          if (err instanceof AppError && err.status === 400) throw new UsageError(err.message);
          throw err;
        });
        show(release.version);
        return 0;
      }
      case "sync": {
        const repo = (values.github as string | undefined) ?? deps.config.syncGithub;
        if (!repo) throw new UsageError("gantry releases sync needs --github OWNER/REPO");
        const progress = process.stderr.isTTY ? terminalProgress(process.stderr as unknown as { write(s: string): unknown; columns?: number }) : undefined;
        const report = await deps.releases.sync
          .run({
            repo,
            apiUrl: (values["api-url"] as string | undefined) ?? deps.config.syncApiUrl,
            token: (values.token as string | undefined) ?? (deps.config.syncToken || undefined),
            prereleases: values.prereleases === true,
            progress,
          })
          .catch((err) => {
            if (err instanceof AppError && err.status === 400) throw new UsageError(err.message);
            throw err;
          });
        if (values.json) printJson(report);
        else printSyncReport(report);
        return report.status === "ok" ? 0 : 1;
      }
      case "list": {
        const views = sortNewestFirst(store.list()).map(releaseView);
        if (values.json) printJson(views);
        else if (views.length === 0) process.stdout.write("No releases yet. Publish one with: gantry releases publish VERSION FILE...\n");
        else {
          const rows = views.map((v) => ({
            version: v.version,
            published: v.publishedAt.slice(0, 10),
            min_app: v.minAppVersion || "-",
            pre: v.prerelease ? "yes" : "",
            origin: v.origin,
            assets: v.assets.length,
            mirrored: v.assets.filter((a) => a.source === "mirror").length,
            downloads: v.downloads,
          }));
          process.stdout.write(table(rows, ["version", "published", "min_app", "pre", "origin", "assets", "mirrored", "downloads"]) + "\n");
        }
        return 0;
      }
      case "delete": {
        const version = positionals[0];
        if (!version) throw new UsageError("usage: gantry releases delete VERSION");
        const gone = await catalog.delete(version);
        process.stdout.write(`release ${gone.version} deleted (${gone.assets.length} asset(s))\n`);
        return 0;
      }
      case "update": {
        const version = positionals[0];
        if (!version) throw new UsageError("usage: gantry releases update VERSION [options]");
        const release = asUsage(() => catalog.update(version, meta(values)));
        show(release.version);
        return 0;
      }
      case "classify": {
        const [version, asset] = positionals;
        if (!version || !asset) throw new UsageError("usage: gantry releases classify VERSION ASSET [--platform P] [--arch A] [--file-type T]");
        const a = asUsage(() =>
          catalog.classify(version, asset, {
            platform: values.platform as string | undefined,
            arch: values.arch as string | undefined,
            fileType: values["file-type"] as string | undefined,
          }),
        );
        if (values.json) printJson(assetView(a));
        else show(version);
        return 0;
      }
    }
    return 2;
  } finally {
    deps.close();
    deps.db.close();
  }
}
