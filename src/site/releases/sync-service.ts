/**
 * `gantry releases sync` and the server's periodic sync: list the remote releases, apply the plan in one
 * transaction, then mirror every asset still pending, one at a time.
 *
 * - Never two at once: calls in one process join the running sync (single flight); across processes (a CLI
 *   sync next to a serving process) a lease row in the database makes the second one fail fast. The lease dies
 *   with its process: one whose holder no longer runs on this host is taken over at once, one held by another
 *   instance (another host) only when its holder stopped renewing it for LEASE_MS.
 * - The last good state is kept when the remote fails: nothing is written unless the whole list was read,
 *   and the remembered ETags only move forward with a successful apply.
 * - A failing asset does not stop the others; it keeps its upstream address (so it is proxied meanwhile),
 *   records the error, and is retried by the next sync.
 * - Signatures (sync-asset.ts): an asset's `NAME.minisig` / `NAME.sig` on the release is fetched with it and stored
 *   with its bytes. With GANTRY_RELEASE_PUBLIC_KEY set it must verify against them, and until it has, the asset is
 *   offered nowhere, not even by its upstream address (signed-offer.ts).
 */
import { randomBytes } from "node:crypto";
import { AppError } from "../../errors";
import type { Logger } from "../../log";
import type { MetaRepository } from "../../state/meta-repository";
import { redactUrlCredentials } from "../../redact";
import { processTag } from "../../state/process-owner";
import { DownloadFetchError } from "../fetch/download-fetch";
import { isHttpUrl } from "../fetch/rules/http-url";
import { MirrorWriteError, type Mirror, type MirrorObject } from "./mirror";
import { storedFields } from "./asset-digests";
import type { MinisignPublicKey } from "../../minisign-key";
import type { AssetRecord, AssetSource, ReleaseRepository } from "./release-repository";
import { servedMeanwhile } from "./rules/signed-offer";
import { mirrorAsset } from "./sync-asset";
import { isValidRepo, listReleases, type GitHubSource, type PageState } from "./sync-github";
import { planSync } from "./rules/sync-plan";
import { silentProgress, type ProgressReporter } from "./sync-progress";
import { SignatureRefused } from "./sync-signature";

export interface SyncOptions {
  /** `owner/repo`. */
  repo: string;
  /** Default https://api.github.com. */
  apiUrl?: string;
  token?: string;
  prereleases?: boolean;
  progress?: ProgressReporter;
  signal?: AbortSignal;
}

export interface SyncReport {
  repo: string;
  apiUrl: string;
  /** ok: all done; partial: some assets failed; failed: the release list could not be read (nothing changed). */
  status: "ok" | "partial" | "failed";
  /** Every page answered 304. */
  unchanged: boolean;
  startedAt: string;
  finishedAt: string;
  pagesFetched: number;
  pagesNotModified: number;
  releasesCreated: string[];
  releasesUpdated: string[];
  assetsAdded: number;
  assetsUpdated: number;
  downloaded: Array<{ version: string; name: string; bytes: number }>;
  /** Assets whose bytes were already in the mirror (same digest): linked without a download. */
  reused: Array<{ version: string; name: string }>;
  /**
   * `meanwhile`: how the asset is served until a later sync succeeds: by its upstream address (`proxy`), the bytes
   * mirrored before (`mirror`), not at all (`unavailable`), or left out of every document (`withheld`: with
   * GANTRY_RELEASE_PUBLIC_KEY, until its bytes are mirrored with a verified signature). Absent in reports of older
   * versions.
   */
  failed: Array<{ version: string; name: string; error: string; meanwhile?: AssetSource | "withheld" }>;
  skipped: Array<{ tag: string; reason: string }>;
  error: string | null;
}

export interface SyncDeps {
  store: ReleaseRepository;
  mirror: Mirror;
  meta: MetaRepository;
  log: Logger;
  now: () => number;
  fetch: typeof fetch;
  /** GANTRY_RELEASE_PUBLIC_KEY: every synced asset's signature must verify with it. Null: carried unchecked. */
  publicKey?: MinisignPublicKey | null;
}

export const DEFAULT_GITHUB_API = "https://api.github.com";
const LEASE = "release-sync";
const LEASE_MS = 5 * 60_000;
const LAST_REPORT_KEY = "releases.sync.last";

export class ReleaseSync {
  private running: Promise<SyncReport> | null = null;
  /** Names this process (host and pid), so a lease left by a sync that was killed is taken over at once. */
  private readonly owner = `${processTag()}-${randomBytes(6).toString("hex")}`;

  constructor(private readonly deps: SyncDeps) {}

  get isRunning(): boolean {
    return this.running !== null;
  }

  /** Runs a sync, or joins the one already running in this process. */
  run(options: SyncOptions): Promise<SyncReport> {
    if (this.running) return this.running;
    const run = this.execute(options).finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  async lastReport(): Promise<SyncReport | null> {
    const raw = await this.deps.meta.get(LAST_REPORT_KEY);
    if (!raw) return null;
    try {
      return JSON.parse(raw) as SyncReport;
    } catch {
      return null;
    }
  }

  private async execute(options: SyncOptions): Promise<SyncReport> {
    const apiUrl = (options.apiUrl || DEFAULT_GITHUB_API).replace(/\/+$/, "");
    if (!isValidRepo(options.repo)) throw new AppError("invalid_request", `'${options.repo}' is not OWNER/REPO.`, { param: "github" });
    if (!isHttpUrl(apiUrl)) throw new AppError("invalid_request", "The API URL must be an http(s) URL.", { param: "apiUrl" });
    // Leases use the wall clock, not the injectable app clock: they are about whether a process is alive.
    if (!(await this.deps.store.acquireLease(LEASE, this.owner, Date.now() + LEASE_MS, Date.now()))) {
      throw new AppError("conflict", "Another release sync is running on this database; try again when it has finished.");
    }
    const renew = setInterval(() => {
      this.deps.store.acquireLease(LEASE, this.owner, Date.now() + LEASE_MS, Date.now()).catch((err) => this.deps.log.warn("sync lease not renewed", { error: (err as Error).message }));
    }, LEASE_MS / 5);
    renew.unref?.();
    try {
      const report = await this.syncOnce({ ...options, apiUrl });
      await this.deps.meta.set(LAST_REPORT_KEY, JSON.stringify(report));
      return report;
    } finally {
      clearInterval(renew);
      await this.deps.store.releaseLease(LEASE, this.owner).catch((err) => this.deps.log.warn("sync lease not released; it expires by itself", { error: (err as Error).message }));
    }
  }

  private async syncOnce(options: SyncOptions & { apiUrl: string }): Promise<SyncReport> {
    const { store, meta, log } = this.deps;
    const source: GitHubSource = { apiUrl: options.apiUrl, repo: options.repo, token: options.token || undefined };
    const report: SyncReport = {
      repo: options.repo,
      // The report is printed, stored and served to the back office: a user:password@ in the URL stays out.
      apiUrl: redactUrlCredentials(options.apiUrl),
      status: "ok",
      unchanged: false,
      startedAt: new Date(this.deps.now()).toISOString(),
      finishedAt: "",
      pagesFetched: 0,
      pagesNotModified: 0,
      releasesCreated: [],
      releasesUpdated: [],
      assetsAdded: 0,
      assetsUpdated: 0,
      downloaded: [],
      reused: [],
      failed: [],
      skipped: [],
      error: null,
    };
    // Remembered per source and pre-release policy: switching --prereleases must re-read every page.
    // `v2`: plans since signatures were paired (sync-plan.ts) read every page once more, so assets synced before
    // learn of the signatures beside them without waiting for their release to change.
    const stateKey = `releases.sync.pages.v2:${options.apiUrl}|${options.repo}|${options.prereleases ? 1 : 0}`;
    const previous = readPages(await meta.get(stateKey));

    let listed;
    try {
      listed = await listReleases(source, previous, { fetch: this.deps.fetch, signal: options.signal });
    } catch (err) {
      report.status = "failed";
      report.error = redactUrlCredentials(err instanceof DownloadFetchError ? err.message : `cannot read the release list: ${(err as Error).message}`);
      report.finishedAt = new Date(this.deps.now()).toISOString();
      log.warn("release sync failed; keeping the last good state", { repo: options.repo, error: report.error });
      return report;
    }
    report.pagesNotModified = listed.notModified;
    if (listed.kind === "unchanged") {
      report.unchanged = true;
    } else {
      report.pagesFetched = listed.fetched;
      const plan = planSync(await store.list(), listed.releases, {
        includePrereleases: options.prereleases === true,
        nowIso: new Date(this.deps.now()).toISOString(),
      });
      report.skipped = plan.skipped;
      const applied = await store.applyBatch(plan.releases);
      report.releasesCreated.push(...applied.created);
      report.releasesUpdated.push(...applied.updated);
      report.assetsAdded += applied.assetsAdded;
      report.assetsUpdated += applied.assetsUpdated;
      // After the commit: if the process dies in between, the next sync re-reads those pages, nothing worse.
      await meta.set(stateKey, JSON.stringify(listed.pages));
    }

    await this.mirrorPending(source, options, report);
    if (report.failed.length > 0) report.status = "partial";
    report.finishedAt = new Date(this.deps.now()).toISOString();
    log.info("release sync finished", {
      repo: options.repo,
      status: report.status,
      created: report.releasesCreated.length,
      downloaded: report.downloaded.length,
      failed: report.failed.length,
      unchanged: report.unchanged,
    });
    return report;
  }

  private async mirrorPending(source: GitHubSource, options: SyncOptions, report: SyncReport): Promise<void> {
    const { store, mirror, log } = this.deps;
    const publicKey = this.deps.publicKey ?? null;
    const progress = options.progress ?? silentProgress;
    const assetDeps = { mirror, fetch: this.deps.fetch, publicKey, isShaReferenced: (sha: string) => store.isShaReferenced(sha) };
    for (const asset of await store.pendingMirrorAssets()) {
      if (options.signal?.aborted) break;
      const version = (await store.getById(asset.releaseId))?.version ?? "?";
      progress.start(`${version} ${asset.name}`, asset.remoteSize ?? asset.size);
      try {
        const done = await mirrorAsset(asset, source, assetDeps, { signal: options.signal, onProgress: (n) => progress.update(n) });
        await this.markMirrored(asset, done, done.signature);
        if (done.reused) report.reused.push({ version, name: asset.name });
        else report.downloaded.push({ version, name: asset.name, bytes: done.size });
        const signed = done.signature ? (publicKey ? ", signature verified" : ", signature carried") : "";
        progress.finish(true, `${done.reused ? "already mirrored" : `${done.size} bytes`}, sha256 ${done.sha256.slice(0, 12)}…${signed}`);
      } catch (err) {
        const message = redactUrlCredentials(
          err instanceof DownloadFetchError || err instanceof MirrorWriteError || err instanceof SignatureRefused
            ? err.message
            : `download failed: ${(err as Error).message}`,
        );
        await store.updateAsset(asset.id, { mirrorError: message });
        const meanwhile = servedMeanwhile((await store.getAsset(asset.id)) ?? asset, publicKey !== null);
        report.failed.push({ version, name: asset.name, error: message, meanwhile });
        progress.finish(false, message);
        log.warn(MEANWHILE_LOG[meanwhile], { version, asset: asset.name, error: message });
      }
    }
  }

  private async markMirrored(asset: AssetRecord, stored: MirrorObject, signature: string | null): Promise<void> {
    const old = asset.mirrored ? asset.sha256 : "";
    const { sha256 } = stored;
    // The signature belongs to these bytes: stored with them, replacing (or clearing) the one of the bytes before.
    await this.deps.store.updateAsset(asset.id, { ...storedFields(stored), mirrored: true, mirrorPending: false, mirrorError: null, signature });
    if (old && old !== sha256 && !(await this.deps.store.isShaReferenced(old))) void this.deps.mirror.remove(old);
  }
}

/** The log line of an asset sync could not finish, by how it is served meanwhile (no addresses, no token). */
const MEANWHILE_LOG: Record<AssetSource | "withheld", string> = {
  proxy: "asset not mirrored; it keeps its upstream address",
  mirror: "asset not updated; the bytes mirrored before are still served",
  unavailable: "asset not mirrored; it cannot be downloaded meanwhile",
  withheld: "asset not offered: its bytes are not mirrored with a verified signature (GANTRY_RELEASE_PUBLIC_KEY)",
};

function readPages(raw: string | null): PageState[] {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((p) => p && typeof p.url === "string" && typeof p.etag === "string") : [];
  } catch {
    return [];
  }
}
