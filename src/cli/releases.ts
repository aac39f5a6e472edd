/** `gantry releases ...`: publish, sync, list, delete (plus update, classify) — the same rules as /admin/api/releases. */
import { AppError } from "../errors";
import { checkRolloutPercent, checkVersion, parsePublishArgument } from "../site/releases/release-catalog";
import { withPublishPlatform } from "../site/releases/publish-platform";
import { assetView, releaseView, sortNewestFirst } from "../site/releases/release-view";
import { formatBytes, terminalProgress } from "../site/releases/sync-progress";
import { configuredTokenFor } from "../site/releases/sync-github";
import type { SyncReport } from "../site/releases/sync-service";
import type { Group } from "./command";
import { STORE_SETTINGS, UsageError, configFrom, print, printJson, table, withStore } from "./common";

const META_OPTIONS = {
  notes: { type: "string" },
  "min-app-version": { type: "string" },
  prerelease: { type: "boolean" },
  "published-at": { type: "string" },
} as const;
const JSON_OPTION = { json: { type: "boolean" } } as const;

const PUBLISH_HELP = `FILE is a local path (copied into the mirror; SHA-256 computed from the copied bytes) or NAME=URL
(an asset known only by its upstream address, served by proxy; an empty URL makes it unavailable).
Publishing to an existing version adds the files (a file of the same name is replaced).
Platform, arch and file type are derived from each file name (change them with gantry releases classify).
A file whose platform the name does not tell is refused unless --platform and --arch are given; they then
classify every FILE of the command (--arch may be left out for --platform web).
Side files carry no platform or arch, with or without --platform, and are never refused for it: checksums
(.sha256, .sha512, SHA256SUMS.txt), signatures (.sig, .minisig, .asc), notes (.txt, .md), update metadata
(.yml, .json, .xml) and blockmaps.`;

const SYNC_HELP = `Mirrors releases and their assets from GitHub Releases (or a compatible API), with a progress bar on a terminal.
--github defaults to GANTRY_SYNC_GITHUB, --api-url to GANTRY_SYNC_API_URL, --token to GANTRY_SYNC_TOKEN
(GANTRY_SYNC_TOKEN only when --api-url is that API's origin).
A release asset NAME.minisig (or NAME.sig) is NAME's signature, fetched and stored with it; with
GANTRY_RELEASE_PUBLIC_KEY (--release-public-key) it must verify, and NAME is offered only once it has.`;

type Values = Record<string, string | boolean | undefined>;

function meta(values: Values) {
  if (values.prerelease && values["no-prerelease"]) throw new UsageError("--prerelease and --no-prerelease exclude each other");
  return {
    notes: values.notes as string | undefined,
    minAppVersion: values["min-app-version"] as string | undefined,
    prerelease: values.prerelease ? true : values["no-prerelease"] ? false : undefined,
    publishedAt: values["published-at"] as string | undefined,
    rolloutPercent: values.rollout === undefined ? undefined : asUsage(() => checkRolloutPercent(values.rollout, "--rollout")),
  };
}

/** Operator mistakes (bad version, missing file, bad URL) are usage errors: exit code 2. */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw asUsageError(err);
  }
}

/** A 400 from the catalog is the caller's mistake: exit code 2 with its message, as a wrong flag gets. */
function asUsageError(err: unknown): unknown {
  return err instanceof AppError && err.status === 400 ? new UsageError(err.message) : err;
}

async function asUsageAsync<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((err) => {
    throw asUsageError(err);
  });
}

/** What a failed asset's line says of how it is served until a later sync succeeds. */
const MEANWHILE_TEXT: Record<NonNullable<SyncReport["failed"][number]["meanwhile"]>, string> = {
  proxy: "not mirrored (keeps its upstream address)",
  mirror: "not updated (the bytes mirrored before are still served)",
  unavailable: "not mirrored (cannot be downloaded meanwhile)",
  withheld: "not offered (no verified signature yet)",
};

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
    for (const f of r.failed) out.push(`  ${MEANWHILE_TEXT[f.meanwhile ?? "proxy"]}: ${f.version} ${f.name}: ${f.error}`);
    for (const s of r.skipped) out.push(`  skipped ${s.tag}: ${s.reason}`);
  }
  print(out.join("\n") + "\n");
}

type Deps = Parameters<Parameters<typeof withStore>[1]>[0];

async function show(deps: Deps, version: string, json: unknown): Promise<void> {
  const v = releaseView(await deps.releases.catalog.find(version));
  if (json) return printJson(v);
  print(`${v.version}  published ${v.publishedAt}  minAppVersion ${v.minAppVersion || "-"}${v.prerelease ? "  (pre-release)" : ""}  rollout ${rolloutText(v)}\n`);
  const rows = v.assets.map((a) => ({ ...a, sha256: a.sha256 ? a.sha256.slice(7, 19) + "…" : "" }));
  if (rows.length) print(table(rows, ["id", "name", "platform", "arch", "fileType", "size", "source", "sha256"]) + "\n");
}

/** `100%`, `30%`, `30% (paused)`, `yanked`. */
function rolloutText(v: { rolloutPercent: number; rolloutPaused: boolean; yanked: boolean }): string {
  if (v.yanked) return "yanked";
  return `${v.rolloutPercent}%${v.rolloutPaused ? " (paused)" : ""}`;
}

/** One rollout command: `gantry releases NAME VERSION` (and `rollout` its PERCENT). */
function rolloutCommand(
  name: string,
  summary: string,
  act: (catalog: Deps["releases"]["catalog"], version: string, percent: string) => Promise<{ version: string }>,
  withPercent = false,
): Group["commands"][number] {
  return {
    name: `releases ${name}`,
    args: withPercent ? "VERSION PERCENT [--json]" : "VERSION [--json]",
    summary,
    options: JSON_OPTION,
    positionals: true,
    settings: STORE,
    run: ({ values, positionals }) => {
      const [version, percent] = exactly(positionals, withPercent ? ["VERSION", "PERCENT"] : ["VERSION"]);
      if (withPercent) asUsage(() => checkRolloutPercent(percent, "PERCENT"));
      return withStore(values, async (deps) => {
        const release = await asUsageAsync(() => act(deps.releases.catalog, version, percent));
        await show(deps, release.version, values.json);
      });
    },
  };
}

/** Exactly the named positionals, or a usage error that says which are needed. */
function exactly(positionals: string[], names: string[]): string[] {
  if (positionals.length !== names.length) throw new UsageError(`needs ${names.join(" and ")}${positionals.length > names.length ? `, and nothing more (got ${positionals.length} arguments)` : ""}`);
  return positionals;
}

const STORE = STORE_SETTINGS;

export const releasesGroup: Group = {
  name: "releases",
  summary: "publish, sync, list, update and delete client releases",
  commands: [
    {
      name: "releases publish",
      args: "VERSION FILE... [--platform P --arch A] [--notes TEXT] [--min-app-version V] [--prerelease] [--published-at ISO] [--rollout PERCENT] [--json]",
      summary: "publish a release from local files or URLs",
      details: PUBLISH_HELP,
      options: { ...META_OPTIONS, platform: { type: "string" }, arch: { type: "string" }, rollout: { type: "string" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const [version, ...files] = positionals;
        if (!version || files.length === 0) throw new UsageError("needs VERSION and at least one FILE");
        const sources = asUsage(() =>
          withPublishPlatform(files.map(parsePublishArgument), { platform: values.platform as string | undefined, arch: values.arch as string | undefined }),
        );
        // Checked before the store is opened: refused input never creates a database.
        asUsage(() => checkVersion(version));
        return withStore(values, async (deps) => {
          const release = await asUsageAsync(() => deps.releases.catalog.publish(version, sources, meta(values as Values)));
          await show(deps, release.version, values.json);
        }, true);
      },
    },
    {
      name: "releases sync",
      args: "[--github OWNER/REPO] [--api-url URL] [--token TOKEN] [--prereleases] [--json]",
      summary: "mirror releases from GitHub Releases",
      details: SYNC_HELP,
      options: { github: { type: "string" }, "api-url": { type: "string" }, token: { type: "string" }, prereleases: { type: "boolean" }, ...JSON_OPTION },
      settings: [...STORE, "sync-github", "sync-api-url", "sync-token", "allowed-fetch-hosts", "release-public-key"],
      run: ({ values }) => {
        const repo = (values.github as string | undefined) ?? configFrom(values).syncGithub;
        if (!repo) throw new UsageError("needs --github OWNER/REPO (or GANTRY_SYNC_GITHUB)");
        return withStore(values, async (deps) => {
          const progress = process.stderr.isTTY ? terminalProgress(process.stderr as unknown as { write(s: string): unknown; columns?: number }) : undefined;
          const report = await deps.releases.sync
            .run({
              repo,
              apiUrl: (values["api-url"] as string | undefined) ?? deps.config.syncApiUrl,
              // GANTRY_SYNC_TOKEN goes to GANTRY_SYNC_API_URL only; --api-url elsewhere needs its own --token.
              token:
                (values.token as string | undefined) ??
                configuredTokenFor(values["api-url"] as string | undefined, { apiUrl: deps.config.syncApiUrl, token: deps.config.syncToken || undefined }),
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
        }, true);
      },
    },
    {
      name: "releases list",
      args: "[--json]",
      summary: "all releases, newest first",
      options: JSON_OPTION,
      settings: STORE,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          const views = sortNewestFirst(await deps.releases.store.list()).map(releaseView);
          if (values.json) return printJson(views);
          if (views.length === 0) return void print("No releases yet. Publish one with: gantry releases publish VERSION FILE...\n");
          const rows = views.map((v) => ({
            version: v.version,
            published: v.publishedAt.slice(0, 10),
            min_app: v.minAppVersion || "-",
            pre: v.prerelease ? "yes" : "",
            rollout: rolloutText(v),
            origin: v.origin,
            assets: v.assets.length,
            mirrored: v.assets.filter((a) => a.source === "mirror").length,
            downloads: v.downloads,
          }));
          print(table(rows, ["version", "published", "min_app", "pre", "rollout", "origin", "assets", "mirrored", "downloads"]) + "\n");
        }),
    },
    {
      name: "releases delete",
      args: "VERSION",
      summary: "delete a release and its mirrored files",
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const [version] = exactly(positionals, ["VERSION"]);
        return withStore(values, async (deps) => {
          const gone = await deps.releases.catalog.delete(version);
          print(`release ${gone.version} deleted (${gone.assets.length} asset(s))\n`);
        });
      },
    },
    {
      name: "releases update",
      args: "VERSION [--notes TEXT] [--min-app-version V] [--prerelease | --no-prerelease] [--published-at ISO] [--json]",
      summary: "change a release's notes, minimum app version, pre-release mark or date",
      options: { ...META_OPTIONS, "no-prerelease": { type: "boolean" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const [version] = exactly(positionals, ["VERSION"]);
        const changes = meta(values as Values);
        return withStore(values, async (deps) => {
          const release = await asUsageAsync(() => deps.releases.catalog.update(version, changes));
          await show(deps, release.version, values.json);
        });
      },
    },
    rolloutCommand("rollout", "offer a release to PERCENT of client ids (0-100; raising it keeps everyone already in)", (c, v, p) => c.rollout(v, p), true),
    rolloutCommand("pause", "freeze a staged rollout: only the clients already in its group keep being offered it", (c, v) => c.pause(v)),
    rolloutCommand("resume", "let a paused rollout's percentage change again", (c, v) => c.resume(v)),
    rolloutCommand("yank", "withdraw a release from every document (its files stay downloadable by asset id)", (c, v) => c.yank(v)),
    rolloutCommand("unyank", "put a yanked release back into the documents", (c, v) => c.yank(v, false)),
    {
      name: "releases classify",
      args: "VERSION ASSET [--platform P] [--arch A] [--file-type T] [--json]",
      summary: "override the platform, arch or file type derived from an asset's file name (ASSET: id or name)",
      options: { platform: { type: "string" }, arch: { type: "string" }, "file-type": { type: "string" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const [version, asset] = exactly(positionals, ["VERSION", "ASSET"]);
        return withStore(values, async (deps) => {
          const a = await asUsageAsync(() =>
            deps.releases.catalog.classify(version, asset, {
              platform: values.platform as string | undefined,
              arch: values.arch as string | undefined,
              fileType: values["file-type"] as string | undefined,
            }),
          );
          if (values.json) printJson(assetView(a));
          else await show(deps, version, false);
        });
      },
    },
  ],
};
