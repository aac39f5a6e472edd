/**
 * Wires the parts of a running Gantry together: the stores (repositories), the key cache, the
 * limiter, the upstream client and the settlement of usage. createApp() takes the result; tests build it
 * with an in-memory database and a fake upstream.
 */
import { statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Config } from "./config";
import type { AdmissionDeps } from "./gateway/limits/admission";
import { KeyCache } from "./gateway/keys/key-cache";
import { InProcessLimiter, type LimiterStore } from "./gateway/limits/limiter";
import type { Prices } from "./gateway/limits/rules/quota";
import { ModelList } from "./gateway/upstream/model-list";
import type { NormalizeOptions } from "./gateway/translate/normalize";
import { compileModelAliases, type ModelAliases } from "./gateway/translate/model-aliases";
import { Upstream } from "./gateway/upstream/upstream";
import { UpstreamPool } from "./gateway/upstream/pool";
import { accountsOf, clientsOf, unconfiguredAccount } from "./gateway/upstream/pool-setup";
import { availabilityOf } from "./gateway/upstream/rules/choose-account";
import { createPriceLookup, createSettler, type Settler } from "./gateway/usage/settle";
import { LedgerHealth } from "./gateway/usage/ledger-health";
import { StallWatch } from "./gateway/pipeline/stall-watch";
import { createLogger, textLogs, type Logger } from "./log";
import { AdminAuth } from "./http/admin-auth";
import { FailureThrottle } from "./http/throttle";
import type { Metrics } from "./http/metrics";
import { createPrometheusMetrics, type MetricSources } from "./http/prometheus";
import { openSqliteStores } from "./store/sqlite/stores";
import { openPostgresStores } from "./store/postgres/stores";
import { RedisLimiter } from "./store/redis/limiter";
import { recordedHistory } from "./gateway/usage/limiter-history";
import { RedisAdminSessions } from "./store/redis/admin-sessions";
import { RedisHeartbeatLimits } from "./store/redis/heartbeat-limits";
import { poolStateFor } from "./pool-state";
import { PoolCounters } from "./gateway/upstream/pool-counters";
import { PoolReport, modelListProbe } from "./gateway/upstream/pool-report";
import type { PoolStateStore, PoolView, UpstreamAccount } from "./gateway/upstream/pool-port";
import { InProcessHeartbeatLimits } from "./site/heartbeats/heartbeat-limits";
import { StorageReserve } from "./state/storage-reserve";
import { ParameterQuirks } from "./gateway/upstream/unsupported-params";
import { AccountQuirks } from "./gateway/upstream/account-quirks";
import type { StoredResponseRepository } from "./gateway/responses/stored-response-repository";
import { responsePurge, type ResponsePurge } from "./gateway/responses/purge";
import type { AdminSessionStore } from "./admin/admin-session-store";
import type { Stores } from "./store/stores";
import type { KeyRepository } from "./gateway/keys/key-repository";
import type { UsageLedger } from "./gateway/usage/ledger-repository";
import type { ChangeFeed } from "./state/change-feed";
import { FileSystemMirror } from "./store/files/fs-mirror";
import { S3Mirror } from "./store/s3/s3-mirror";
import type { Mirror } from "./site/releases/mirror";
import { RecordingMirror, checkMirrorRecord } from "./site/downloads/mirror-record";
import { DownloadService } from "./site/downloads/download-service";
import type { MetaRepository } from "./state/meta-repository";
import { createEngagementServices, type EngagementServices } from "./site/engagement-services";
import { createReleaseServices, type ReleaseServices } from "./site/releases/release-services";

export interface AppDeps {
  config: Config;
  /** Every record, behind the repositories' interfaces (SQLite in the data dir by default). */
  stores: Stores;
  meta: MetaRepository;
  /** How changes to keys, releases and announcements reach this process's caches. */
  changes: ChangeFeed;
  keys: KeyRepository;
  keyCache: KeyCache;
  limiter: LimiterStore;
  /** Back-office sessions shared by the instances (Redis); in process when absent. */
  adminSessions?: AdminSessionStore;
  ledger: UsageLedger;
  settler: Settler;
  /** Whether the ledger can be written; gateway requests are refused while it cannot. */
  ledgerHealth: LedgerHealth;
  /** Gives up streams whose caller stopped reading (GANTRY_WRITE_STALL_SECONDS). */
  stalls: StallWatch;
  admission: AdmissionDeps;
  /** The first account's client (the only one of a pool of one). */
  upstream: Upstream;
  /** The upstream accounts as configured (none when no upstream is set). */
  accounts: readonly UpstreamAccount[];
  /** Each account's client, by name. */
  upstreamClients: Map<string, Upstream>;
  /** The accounts' shared health (Redis with GANTRY_REDIS_URL, else in process). */
  poolState: PoolStateStore;
  /** What the pool reports: counted per account here and in /metrics. */
  poolEvents: PoolCounters;
  /** The accounts as operators see and change them (admin API, back office, `gantry upstreams`). */
  pool: PoolView;
  /** Every call to the upstream goes through it: the choice of an account, failover, cooldowns. */
  upstreamPool: UpstreamPool;
  /** Parameters each account's upstream refuses (learnt from its 400s, and the configured ones). */
  quirks: AccountQuirks;
  responses: StoredResponseRepository;
  /** The hourly removal of expired stored responses: `serve` starts it, close() stops it. */
  responsePurge: ResponsePurge;
  models: ModelList;
  /** The upstream's name for a model a caller names (GANTRY_MODEL_ALIASES). */
  modelAliases: ModelAliases;
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
  /** Stops timers, commits pending writes and closes the stores (also stores handed in DepsOptions). */
  close(): Promise<void>;
}

export interface DepsOptions {
  /** The records' backend; default PostgreSQL when `config.databaseUrl` is set, else SQLite at `databasePath`. Closed by AppDeps.close(). */
  stores?: Stores;
  /** For the default SQLite stores: ":memory:" for tests; default `<dataDir>/gantry.db`. */
  databasePath?: string;
  /** Refuse to create the database: DatabaseMissingError when there is none (the CLI's commands other than serve). */
  existingDatabaseOnly?: boolean;
  /**
   * Reach the S3 bucket (when one is set) and check that it is the mirror the database's files are in, before going
   * on; default true. One-shot commands skip it (a write into another mirror is still refused).
   */
  checkMirror?: boolean;
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

/** Bytes free for an unprivileged writer on the file system holding `dir`. */
function freeBytesAt(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** The S3 mirror of the settings' bucket (GANTRY_S3_*), spooling uploads in the data dir. */
function s3MirrorOf(config: Config): S3Mirror {
  return new S3Mirror({
    bucket: config.s3Bucket,
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    accessKeyId: config.s3AccessKeyId,
    secretAccessKey: config.s3SecretAccessKey,
    spoolDir: join(config.dataDir, "mirror", ".tmp"),
    presign: config.s3RedirectDownloads,
  });
}

/**
 * Where asset bytes live: the S3 bucket when one is set, else the data dir. `check`: reach the bucket now, so a
 * wrong name, endpoint or key fails the start with a clear message (a server; a CLI command that never touches
 * bytes should not depend on S3 being up).
 */
export async function openMirror(config: Config, check = true): Promise<Mirror> {
  if (!config.s3Bucket) return new FileSystemMirror(join(config.dataDir, "mirror"));
  const mirror = s3MirrorOf(config);
  if (check) await mirror.check();
  return mirror;
}

export async function createDeps(config: Config, options: DepsOptions = {}): Promise<AppDeps> {
  const now = options.now ?? Date.now;
  const log = options.log ?? createLogger(config.logLevel, undefined, textLogs(config.logFormat));
  const checkMirror = options.checkMirror ?? true;
  const openedMirror = options.mirror ?? (await openMirror(config, checkMirror));
  const onChangeFeedError = (err: unknown) => log.warn("change feed failed", { error: (err as Error).message });
  const stores =
    options.stores ??
    (config.databaseUrl
      ? await openPostgresStores({ url: config.databaseUrl, now, onChangeFeedError })
      : openSqliteStores({ path: options.databasePath ?? databasePathOf(config), existingOnly: options.existingDatabaseOnly, now, onChangeFeedError }));
  const { meta, changes, keys, ledger } = stores;
  // The database notes which mirror holds its files; an instance started with another one would serve none of them.
  const mirror = new RecordingMirror(openedMirror, meta);
  if (checkMirror) {
    try {
      await checkMirrorRecord({ meta, releases: stores.releases, mirror, log });
    } catch (err) {
      await stores.close();
      throw err;
    }
  }
  // Injected (a shared limiter lets several instances enforce one set of limits); in-process by default.
  let limiter: LimiterStore;
  if (options.limiter) limiter = options.limiter;
  else if (config.redisUrl) {
    const redis = new RedisLimiter(config.redisUrl, {
      leaseMs: config.redisLeaseSeconds * 1000,
      fallback: config.redisFailOpen ? new InProcessLimiter() : undefined,
      history: recordedHistory(keys, ledger),
      onError: (err) => log.warn(config.redisFailOpen ? "redis unreachable: admitting against this instance's share of each limit" : "redis unreachable: gateway requests get 503 until it is back", { error: (err as Error).message }),
      onRecover: () => log.info("redis reachable again: limits are shared again"),
    });
    try {
      await redis.start();
    } catch (err) {
      redis.close();
      await stores.close();
      throw err;
    }
    limiter = redis;
  } else limiter = new InProcessLimiter();
  // With Redis, a browser signed in through one instance is signed in on every one (a load balancer need not be sticky).
  const adminSessions = config.redisUrl ? new RedisAdminSessions(config.redisUrl, now) : undefined;
  const keyCache = new KeyCache(keys, changes, {
    beforeReload: () => ledger.flush(),
    afterReload: (ids) => limiter.forget(ids),
    onError: (err) => log.warn("key reload failed", { error: (err as Error).message }),
  });
  try {
    await keyCache.start();
  } catch (err) {
    await stores.close();
    throw err;
  }
  const priceOf = createPriceLookup(config.prices);
  // Assigned below, once the services its scrape-time values come from exist.
  let metrics: Metrics | undefined;
  const settler = createSettler({
    ledger,
    priceOf,
    onSettled: (o) => metrics?.tokensSettled(o.tokens.inputTokens, o.tokens.outputTokens),
  });
  const ledgerHealth = new LedgerHealth(() => ledger.probe(), log);
  const stalls = new StallWatch(config.writeStallSeconds * 1000);
  const accounts = accountsOf(config);
  // Without an upstream the pool is one unconfigured account: its client answers 503 upstream_not_configured.
  const upstreamAccounts = accounts.length > 0 ? accounts : [unconfiguredAccount()];
  const upstreamClients = clientsOf(upstreamAccounts, config, options.fetch);
  const upstream = upstreamClients.get(upstreamAccounts[0]!.name)!;
  // Parameters an account's upstream refused before (this or another instance, before a restart) are dropped from the
  // first call to that account; each upstream (base URL) learns its own.
  const quirks = new AccountQuirks(upstreamAccounts, (upstreamName, names) =>
    new ParameterQuirks(
      config.upstreamDropParams,
      (model, param) => log.warn("the upstream refuses a parameter: it is dropped from requests for this model to its account from now on", { account: names.join(", "), model, param }),
      {
        repository: stores.refusedParams,
        upstream: upstreamName,
        now,
        onWriteError: (err, model, param) => log.warn("a refused parameter could not be stored: it is learnt again after a restart", { account: names.join(", "), model, param, error: (err as Error).message }),
      },
    ),
  );
  try {
    await quirks.load();
  } catch (err) {
    keyCache.stop();
    limiter.close();
    adminSessions?.close();
    await stores.close();
    throw err;
  }
  const heartbeatLimitSettings = { perMinute: config.heartbeatRpm, clientsPerHour: config.heartbeatClientsPerHour };
  const heartbeatLimits = config.redisUrl
    ? new RedisHeartbeatLimits(config.redisUrl, heartbeatLimitSettings, new InProcessHeartbeatLimits(heartbeatLimitSettings), {
        onError: (err) => log.warn("redis unreachable: heartbeats are limited by this instance alone", { error: (err as Error).message }),
        onRecover: () => log.info("redis reachable again: heartbeat limits are shared again"),
      })
    : new InProcessHeartbeatLimits(heartbeatLimitSettings);
  // The reserve guards the file system the embedded database is on; PostgreSQL's disk is not this machine's to read.
  const databaseDir = dirname(options.databasePath ?? databasePathOf(config));
  const storage = new StorageReserve(config.databaseUrl ? () => null : () => freeBytesAt(databaseDir), config.storageReserveMb * 1048576, log);
  const ctx = { config, meta, changes, releases: stores.releases, downloads: stores.downloads, announcements: stores.announcements,
    clients: stores.clients, heartbeatLimits, storage, mirror, log, now, fetch: options.fetch ?? fetch };
  const releases = createReleaseServices(ctx, (parts) =>
    new DownloadService({ ...parts, tokens: ctx.downloads, meta: ctx.meta, config: ctx.config, now: ctx.now, log: ctx.log, storage: ctx.storage }),
  );
  const engagement = createEngagementServices(ctx);
  const poolState = poolStateFor(config, log, now);
  // Read at scrape time, once the view exists (below).
  let pool: PoolView | null = null;
  metrics = options.metrics ?? createPrometheusMetrics(metricSources(limiter, releases, engagement, async () => (await pool?.list()) ?? []));
  const poolEvents = new PoolCounters(metrics);
  const probeClient = (a: UpstreamAccount) => upstreamClients.get(a.name) ?? upstream;
  // An operator's change reaches this instance's pool at once (others sharing Redis read it within a second).
  pool = new PoolReport({ accounts, state: poolState, counters: poolEvents, probe: modelListProbe(probeClient), now, changed: () => upstreamPool.operatorChanged() });
  const upstreamPool = new UpstreamPool({
    accounts: upstreamAccounts,
    clientOf: (a) => upstreamClients.get(a.name)!,
    state: poolState,
    events: poolEvents,
    quirksOf: (a) => quirks.of(a),
    log,
    now,
    maxEventBytes: config.maxUpstreamEventBytes,
    holdQuietMs: config.keepAliveSeconds * 1000,
  });
  const purge = responsePurge(stores.responses, now, log);
  return {
    config,
    stores,
    meta,
    changes,
    keys,
    keyCache,
    limiter,
    adminSessions,
    ledger,
    settler,
    ledgerHealth,
    stalls,
    admission: { keys: keyCache, limiter, priceOf, now },
    upstream,
    accounts,
    upstreamClients,
    poolState,
    poolEvents,
    upstreamPool,
    pool,
    responses: stores.responses,
    responsePurge: purge,
    quirks,
    models: new ModelList(
      upstreamAccounts.map((account) => ({ account, client: upstreamClients.get(account.name)! })),
      config.modelsCacheSeconds * 1000,
      now,
      async (names) => {
        const health = await poolState.read(names);
        const t = now();
        const out = (a: UpstreamAccount) => {
          const state = availabilityOf(a, health.get(a.name), "*", t);
          return state.state === "out" && state.why !== "busy";
        };
        return new Set(upstreamAccounts.filter(out).map((a) => a.name));
      },
    ),
    modelAliases: compileModelAliases(config.modelAliases),
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
      purge.stop();
      keyCache.stop();
      ledgerHealth.stop();
      stalls.stop();
      releases.close();
      await engagement.close();
      limiter.close();
      poolState.close();
      adminSessions?.close();
      await stores.close();
    },
  };
}

/** The values /metrics reads at scrape time, from the services that own them. */
function metricSources(limiter: LimiterStore, releases: ReleaseServices, engagement: EngagementServices, upstreams: MetricSources["upstreams"]): MetricSources {
  return {
    upstreams,
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
