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
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const TEST_ADMIN_TOKEN = "gat-test-admin-token-0123456789abcdef";

export interface Gantry {
  url: string;
  deps: AppDeps;
  /** The SQLite database under the stores, for tests that look at rows (open until stop()). */
  db: Database;
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
  options: { config?: Partial<Config>; now?: () => number; captureLogs?: boolean; databasePath?: string } = {},
): Promise<Gantry> {
  const dataDir = options.config?.dataDir ?? mkdtempSync(join(tmpdir(), "gantry-test-"));
  const ownsDataDir = options.config?.dataDir === undefined;
  const config = defaultConfig({
    host: "127.0.0.1",
    port: 0,
    adminToken: TEST_ADMIN_TOKEN,
    upstreamKey: "upstream-secret-key",
    keepAliveSeconds: 15,
    ...options.config,
    dataDir,
  });
  const logs: string[] = [];
  const log: Logger = options.captureLogs ? createLogger("debug", (l) => logs.push(l), false) : silentLogger;
  const stores = openSqliteStores({ path: options.databasePath ?? ":memory:", now: options.now });
  const deps = await createDeps(config, { stores, log, now: options.now });
  deps.releases.start();
  deps.engagement.start();
  const running = startServer(deps, { hostname: "127.0.0.1", port: 0 });
  return {
    url: running.url,
    deps,
    db: stores.db,
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
