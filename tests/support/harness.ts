/**
 * Starts a real Gantry over HTTP on 127.0.0.1 (port 0) with an in-memory database, for integration and
 * client tests. Time can be injected; the admin token is fixed so tests can call /admin/api.
 */
import { defaultConfig, type Config } from "../../src/config";
import { createDeps, type AppDeps } from "../../src/deps";
import { createLogger, silentLogger, type Logger } from "../../src/log";
import { startServer, type RunningServer } from "../../src/server";
import type { KeyFields } from "../../src/gateway/keys/key-repository";
import { openSqliteStores } from "../../src/store/sqlite/stores";
import { openPostgresStores } from "../../src/store/postgres/stores";
import type { Stores } from "../../src/store/stores";
import type { Mirror } from "../../src/site/releases/mirror";
import type { Database } from "bun:sqlite";
import { freshDatabase } from "./postgres";
import { redisUrl } from "./redis";
import { s3Server } from "./s3";
import { RedisLimiter } from "../../src/store/redis/limiter";
import { recordedHistory } from "../../src/gateway/usage/limiter-history";

/**
 * The backends of the servers tests start: SQLite in memory and the in-process limiter by default;
 * `GANTRY_TEST_BACKEND=shared` runs the same tests on a fresh PostgreSQL database each, the Redis limiter and
 * an S3 bucket each for the asset bytes
 * (tests that read SQLite rows directly through `db` cannot run then, and say so).
 */
export const TEST_BACKEND = process.env.GANTRY_TEST_BACKEND === "shared" ? "shared" : "embedded";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const TEST_ADMIN_TOKEN = "gat-test-admin-token-0123456789abcdef";

export interface Gantry {
  url: string;
  deps: AppDeps;
  /** The SQLite database under the stores, for tests that look at rows (open until stop()); SQLite only. */
  readonly db: Database;
  /**
   * Rows of a query on whichever backend runs (`$1`, `$2` placeholders). Write SQL both speak; cast counts and
   * times to DOUBLE PRECISION, since PostgreSQL returns BIGINT as a string.
   */
  query(text: string, ...params: unknown[]): Promise<Array<Record<string, any>>>;
  running: RunningServer;
  config: Config;
  /** Log lines written during the run (JSON), when `captureLogs` was set. */
  logs: string[];
  /** Creates a key directly in the store and makes the server see it at once; returns its secret. */
  createKey(fields?: Partial<KeyFields> & { name?: string }): Promise<string>;
  /** Makes the server reload keys now (as the change feed would within a quarter of a second). */
  reloadKeys(): Promise<void>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

let keyCounter = 0;

export async function startGantry(
  options: {
    config?: Partial<Config>;
    now?: () => number;
    captureLogs?: boolean;
    databasePath?: string;
    /** Shared backend: this existing PostgreSQL database (kept on stop) instead of a fresh one, e.g. to restart on it. */
    databaseUrl?: string;
    /** The mirror to use instead of the configured one (built for the run's data dir). */
    mirror?: (dataDir: string) => Mirror;
    /** The upstream client's fetch (e.g. one that counts open upstream bodies). */
    fetch?: typeof fetch;
  } = {},
): Promise<Gantry> {
  const dataDir = options.config?.dataDir ?? mkdtempSync(join(tmpdir(), "gantry-test-"));
  // Shared backend: asset bytes in a bucket of their own on the run's S3 server.
  let s3Settings: Partial<Config> = {};
  if (TEST_BACKEND === "shared" && options.databasePath === undefined) {
    const s3 = await s3Server();
    s3Settings = { s3Bucket: await s3.createBucket(), s3Endpoint: s3.endpoint, s3Region: s3.region, s3AccessKeyId: s3.accessKeyId, s3SecretAccessKey: s3.secretAccessKey };
  }
  const ownsDataDir = options.config?.dataDir === undefined;
  const config = defaultConfig({
    host: "127.0.0.1",
    port: 0,
    adminToken: TEST_ADMIN_TOKEN,
    upstreamKey: "upstream-secret-key",
    keepAliveSeconds: 15,
    // A test's fleet of clients reports from one loopback address: the per-address heartbeat limits are off
    // unless the test sets them.
    heartbeatRpm: 0,
    heartbeatClientsPerHour: 0,
    ...s3Settings,
    ...options.config,
    dataDir,
  });
  const logs: string[] = [];
  const log: Logger = options.captureLogs ? createLogger("debug", (l) => logs.push(l), false) : silentLogger;
  let stores: Stores;
  let sqliteDb: Database | null = null;
  let dropDatabase = async () => {};
  let pgQuery: ((text: string, params: unknown[]) => Promise<Array<Record<string, any>>>) | null = null;
  let limiter: RedisLimiter | undefined;
  if (TEST_BACKEND === "shared" && options.databasePath === undefined) {
    const pg = options.databaseUrl ? null : await freshDatabase();
    const pgStores = await openPostgresStores({ url: options.databaseUrl ?? pg!.url, now: options.now });
    stores = pgStores;
    // As a server builds it (deps.ts): a key Redis holds nothing for is built from this database's record.
    limiter = new RedisLimiter(await redisUrl(), { history: recordedHistory(pgStores.keys, pgStores.ledger) });
    await limiter.start();
    pgQuery = async (text, params) => [...(await pgStores.sql.unsafe(text, params as any[]))];
    if (pg) dropDatabase = pg.drop;
  } else {
    const sqlite = openSqliteStores({ path: options.databasePath ?? ":memory:", now: options.now });
    sqliteDb = sqlite.db;
    stores = sqlite;
  }
  const deps = await createDeps(config, { stores, limiter, log, now: options.now, mirror: options.mirror?.(dataDir), fetch: options.fetch });
  deps.releases.start();
  // The first online sample is taken before tests run, so it cannot land in the middle of one.
  await deps.engagement.start();
  const running = startServer(deps, { hostname: "127.0.0.1", port: 0 });
  return {
    url: running.url,
    deps,
    get db(): Database {
      if (!sqliteDb) throw new Error("this test reads SQLite rows directly; it runs on the SQLite backend only");
      return sqliteDb;
    },
    async query(text, ...params) {
      if (pgQuery) return pgQuery(text, params);
      return sqliteDb!.query(text.replace(/\$(\d+)/g, "?$1")).all(...(params as any[])) as Array<Record<string, any>>;
    },
    running,
    config,
    logs,
    async createKey(fields = {}) {
      const { secret } = await deps.keys.create({ name: fields.name ?? `test-key-${++keyCounter}`, ...fields });
      await deps.keyCache.reload();
      return secret;
    },
    reloadKeys() {
      return deps.keyCache.reload();
    },
    admin(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${TEST_ADMIN_TOKEN}`);
      if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
      return fetch(running.url + path, { ...init, headers });
    },
    async stop() {
      // Stopping the server closes the deps, and with them the stores.
      await running.stop(1000);
      await dropDatabase();
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads a whole SSE body into its `data:` payloads (parsed JSON, or the raw text for `[DONE]`). */
export async function readSseData(res: Response): Promise<any[]> {
  const text = await res.text();
  const out: any[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    if (!data) continue;
    out.push(data === "[DONE]" ? data : JSON.parse(data));
  }
  return out;
}

export function authed(key: string, body?: unknown, extra: Record<string, string> = {}): RequestInit {
  return {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}
