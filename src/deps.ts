/**
 * Wires the parts of a running Gantry together: the database and its repositories, the key cache, the
 * limiter, the upstream client and the settlement of usage. createApp() takes the result; tests build it
 * with an in-memory database and a fake upstream.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Config } from "./config";
import type { AdmissionDeps } from "./gateway/limits/admission";
import { KeyCache } from "./gateway/keys/key-cache";
import { InProcessLimiter, type LimiterStore } from "./gateway/limits/limiter";
import type { Prices } from "./gateway/limits/quota";
import { ModelList } from "./gateway/upstream/model-list";
import type { NormalizeOptions } from "./gateway/translate/normalize";
import { Upstream } from "./gateway/upstream/upstream";
import { createPriceLookup, createSettler, type Settler } from "./gateway/usage/settle";
import { createLogger, type Logger } from "./log";
import { AdminAuth } from "./http/admin-auth";
import { FailureThrottle } from "./http/throttle";
import type { Metrics } from "./http/metrics";
import { createPrometheusMetrics, type MetricSources } from "./http/prometheus";
import { openDatabase } from "./store/sqlite/db";
import { SqliteKeyRepository } from "./store/sqlite/keys";
import { SqliteUsageLedger } from "./store/sqlite/ledger";
import { SqliteReleaseRepository } from "./store/sqlite/releases";
import { SqliteDownloadRepository } from "./store/sqlite/downloads";
import { SqliteAnnouncementRepository } from "./store/sqlite/announcements";
import { SqliteClientRepository } from "./store/sqlite/clients";
import type { KeyRepository } from "./gateway/keys/key-repository";
import type { UsageLedger } from "./gateway/usage/ledger-repository";
import { SqliteMetaRepository } from "./store/sqlite/meta";
import { SqliteChangeFeed } from "./store/sqlite/change-feed";
import type { ChangeFeed } from "./store/change-feed";
import { FileSystemMirror } from "./store/files/fs-mirror";
import type { Mirror } from "./site/downloads/mirror";
import type { MetaRepository } from "./store/meta-repository";
import { createEngagementServices, type EngagementServices } from "./site/engagement-services";
import { createReleaseServices, type ReleaseServices } from "./site/releases/release-services";

export interface AppDeps {
  config: Config;
  db: Database;
  meta: MetaRepository;
  /** How changes to keys, releases and announcements reach this process's caches. */
  changes: ChangeFeed;
  keys: KeyRepository;
  keyCache: KeyCache;
  limiter: LimiterStore;
  ledger: UsageLedger;
  settler: Settler;
  admission: AdmissionDeps;
  upstream: Upstream;
  models: ModelList;
  normalizeOptions: NormalizeOptions;
  priceOf: (model: string) => Prices | null;
  adminAuth: AdminAuth;
  /** Failed API-key attempts per client address (gateway brute-force slowing). */
  keyThrottle: FailureThrottle;
  releases: ReleaseServices;
  engagement: EngagementServices;
  /** Always set by createDeps (a Prometheus registry of its own unless DepsOptions.metrics is given). */
  metrics?: Metrics;
  log: Logger;
  now: () => number;
  /** Stops timers and commits pending writes; the database stays open (the caller owns it). */
  close(): Promise<void>;
}

export interface DepsOptions {
  /** ":memory:" for tests; default `<dataDir>/gantry.db`. */
  databasePath?: string;
  db?: Database;
  /** Refuse to create the database: DatabaseMissingError when there is none (the CLI's commands other than serve). */
  existingDatabaseOnly?: boolean;
  log?: Logger;
  now?: () => number;
  fetch?: typeof fetch;
  metrics?: Metrics;
  /** Where asset bytes are kept; default the file system under `<dataDir>/mirror`. */
  mirror?: Mirror;
  /** Where rate buckets, concurrency and quota use are kept; default InProcessLimiter. */
  limiter?: LimiterStore;
}

export function databasePathOf(config: Config): string {
  return join(config.dataDir, "gantry.db");
}

export async function createDeps(config: Config, options: DepsOptions = {}): Promise<AppDeps> {
  const now = options.now ?? Date.now;
  const log = options.log ?? createLogger(config.logLevel);
  const db = options.db ?? openDatabase(options.databasePath ?? databasePathOf(config), { existingOnly: options.existingDatabaseOnly });
  const meta = new SqliteMetaRepository(db);
  const changes = new SqliteChangeFeed(db, { onError: (err) => log.warn("change feed read failed", { error: (err as Error).message }) });
  const keys = new SqliteKeyRepository(db, now);
  const ledger = new SqliteUsageLedger(db);
  // Injected (a shared limiter lets several instances enforce one set of limits); in-process by default.
  const limiter = options.limiter ?? new InProcessLimiter();
  const keyCache = new KeyCache(keys, changes, {
    beforeReload: () => ledger.flush(),
    afterReload: (ids) => limiter.forget(ids),
    onError: (err) => log.warn("key reload failed", { error: (err as Error).message }),
  });
  await keyCache.start();
  const priceOf = createPriceLookup(config.prices);
  // Assigned below, once the services its scrape-time values come from exist.
  let metrics: Metrics | undefined;
  const settler = createSettler({
    ledger,
    priceOf,
    onSettled: (o) => metrics?.tokensSettled(o.tokens.inputTokens, o.tokens.outputTokens),
  });
  const upstream = new Upstream({
    baseUrl: config.upstreamUrl,
    apiKey: config.upstreamKey,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    firstByteTimeoutMs: config.upstreamFirstByteTimeoutMs,
    idleTimeoutMs: config.upstreamIdleTimeoutMs,
    retries: config.upstreamRetries,
    fetch: options.fetch,
  });
  const mirror = options.mirror ?? new FileSystemMirror(join(config.dataDir, "mirror"));
  const releaseRepository = new SqliteReleaseRepository(db, now, () => changes.touch("releases"));
  const ctx = { config, db, meta, changes, releases: releaseRepository, downloads: new SqliteDownloadRepository(db),
    announcements: new SqliteAnnouncementRepository(db, () => changes.touch("announcements")),
    clients: new SqliteClientRepository(db),
    mirror, log, now, fetch: options.fetch ?? fetch };
  const releases = createReleaseServices(ctx);
  const engagement = createEngagementServices(ctx);
  metrics = options.metrics ?? createPrometheusMetrics(metricSources(limiter, releases, engagement));
  return {
    config,
    db,
    meta,
    changes,
    keys,
    keyCache,
    limiter,
    ledger,
    settler,
    admission: { keys: keyCache, limiter, priceOf, now },
    upstream,
    models: new ModelList(upstream, config.modelsCacheSeconds * 1000, now),
    normalizeOptions: { defaultInstructions: config.defaultInstructions, modelOverrides: config.modelOverrides },
    priceOf,
    adminAuth: new AdminAuth(meta, config.adminToken),
    keyThrottle: new FailureThrottle(now, { freeFailures: 10 }),
    releases,
    engagement,
    metrics,
    log,
    now,
    async close() {
      keyCache.stop();
      releases.close();
      changes.close();
      await Promise.all([engagement.close(), ledger.close()]);
    },
  };
}

/** The values /metrics reads at scrape time, from the services that own them. */
function metricSources(limiter: LimiterStore, releases: ReleaseServices, engagement: EngagementServices): MetricSources {
  return {
    inFlight: () => limiter.totalInFlight(),
    heartbeatsIngested: () => engagement.heartbeats.totals.heartbeats,
    clientsOnline: () => engagement.stats.online(),
    downloads: async () => (await releases.store.list()).reduce((n, r) => n + r.assets.reduce((m, a) => m + a.downloads, 0), 0),
    sync: async () => {
      const last = await releases.sync.lastReport();
      return { running: releases.sync.isRunning, lastStatus: last?.status ?? null, lastFinishedAt: last?.finishedAt ?? null };
    },
  };
}
