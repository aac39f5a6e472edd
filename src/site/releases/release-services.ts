/**
 * Release, asset, mirror, download-token and sync services (issue 5), built once per process from the
 * shared ServiceContext. Routes, the admin API, the CLI and the demo seed all go through these.
 */
import { join } from "node:path";
import type { ServiceContext } from "../../service-context";
import { guardedFetch } from "../fetch/fetch-guard";
import type { Mirror } from "./mirror";
import { backfillUpdaterDigests } from "./asset-digests";
import { parsePublicKeySetting } from "../../minisign-key";
import { ReleaseCatalog } from "./release-catalog";
import type { ReleaseRecord, ReleaseRepository } from "./release-repository";
import { offeredReleases } from "./rules/signed-offer";
import { ReleaseSync, type SyncOptions, type SyncReport } from "./sync-service";

/**
 * What the assets are handed out through: signed links and their serving (downloads/download-service.ts). Declared
 * here and built by a factory the composition root passes in, so releases/ imports nothing of downloads/ (which
 * reads the releases).
 */
export interface DownloadLinks {
  issue(rawId: string, client: string): Promise<string>;
  serve(request: Request, token: string, client: string): Promise<Response>;
  downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>>;
  purgeExpired(now: number): Promise<number>;
}

/** What the release services share with the download service built for them. */
export interface DownloadParts {
  store: ReleaseRepository;
  mirror: Mirror;
  /** The guarded fetch: proxied downloads reach only public addresses, as syncs do. */
  fetch: typeof fetch;
  /** GANTRY_RELEASE_PUBLIC_KEY is set: only assets with a verified signature are served. */
  requireSignatures: boolean;
}

export interface ReleaseServices {
  /** Releases and assets (`ServiceContext.releases`). */
  store: ReleaseRepository;
  /** Where asset bytes are kept (`ServiceContext.mirror`). */
  mirror: Mirror;
  /** Operator operations: publish, upload, update, classify, delete. */
  catalog: ReleaseCatalog;
  /** Token minting and `/dl/{token}` serving. */
  downloads: DownloadLinks;
  /**
   * The releases as the documents offer them: with GANTRY_RELEASE_PUBLIC_KEY set, without the synced assets whose
   * bytes are not yet mirrored with a verified signature (signed-offer.ts).
   */
  offered(): Promise<ReleaseRecord[]>;
  /** GitHub Releases sync (single flight). */
  sync: ReleaseSync;
  /** The sync the settings describe (`syncGithub`, `syncApiUrl`, `syncToken`, `syncPrereleases`), or null when unset. */
  configuredSync(): SyncOptions | null;
  /** Starts background work: the periodic sync when `syncGithub` and `syncIntervalMinutes` are set. */
  start(): void;
  /** Stops timers and aborts a running sync. */
  close(): void;
}

export function createReleaseServices(ctx: ServiceContext, downloadsFor: (parts: DownloadParts) => DownloadLinks): ReleaseServices {
  const store = ctx.releases;
  const mirror = ctx.mirror;
  const publicKey = ctx.config.releasePublicKey ? parsePublicKeySetting(ctx.config.releasePublicKey) : null;
  const catalog = new ReleaseCatalog(store, mirror, ctx.now, publicKey);
  // Proxied downloads and syncs fetch only public addresses, unless the operator lists the host.
  const fetch = guardedFetch(ctx.fetch, {
    allowedHosts: ctx.config.allowedFetchHosts,
    onRefused: (host, reason) => ctx.log.warn("fetch refused", { host, reason }),
  });
  const requireSignatures = publicKey !== null;
  const downloads = downloadsFor({ store, mirror, fetch, requireSignatures });
  const sync = new ReleaseSync({ store, mirror, meta: ctx.meta, log: ctx.log, now: ctx.now, fetch, publicKey });
  const timers: Array<ReturnType<typeof setTimeout>> = [];
  const abort = new AbortController();

  const configuredSync = (): SyncOptions | null =>
    ctx.config.syncGithub
      ? {
          repo: ctx.config.syncGithub,
          apiUrl: ctx.config.syncApiUrl,
          token: ctx.config.syncToken || undefined,
          prereleases: ctx.config.syncPrereleases,
          signal: abort.signal,
        }
      : null;

  const periodic = () => {
    const options = configuredSync();
    if (!options || sync.isRunning) return;
    sync.run(options).catch((err) => ctx.log.warn("periodic release sync did not run", { error: (err as Error).message }));
  };

  return {
    store,
    mirror,
    catalog,
    downloads,
    offered: async () => offeredReleases(await store.list(), requireSignatures),
    sync,
    configuredSync,
    start() {
      mirror.sweep().catch((err) => ctx.log.warn("could not clear abandoned mirror writes", { error: (err as Error).message }));
      // Files stored before the updaters' digests existed get them once, in the background (asset-digests.ts).
      backfillUpdaterDigests({ store, mirror, signal: abort.signal }).then(
        (n) => n > 0 && ctx.log.info("updater digests computed for assets stored before them", { assets: n }),
        (err) => ctx.log.warn("updater digests not computed; next start tries again", { error: (err as Error).message }),
      );
      if (!ctx.config.syncGithub || ctx.config.syncIntervalMinutes <= 0) return;
      // First run right away, so a fresh server has releases without waiting a whole interval.
      const first = setTimeout(periodic, 0);
      const every = setInterval(periodic, ctx.config.syncIntervalMinutes * 60_000);
      first.unref?.();
      every.unref?.();
      timers.push(first, every);
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.length = 0;
      abort.abort(new Error("shutting down"));
    },
  };
}
