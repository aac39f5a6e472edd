/**
 * The shared backend: every repository on one PostgreSQL database (GANTRY_DATABASE_URL), so several
 * instances and the CLI on any machine see the same records. Changes reach every instance through
 * LISTEN/NOTIFY.
 */
import { PostgresStoredResponses } from "./stored-responses";
import type { SQL } from "bun";
import type { Stores } from "../stores";
import { PostgresRefusedParams } from "./refused-params";
import { PostgresAnnouncementRepository } from "./announcements";
import { PostgresChangeFeed } from "./change-feed";
import { PostgresClientRepository } from "./clients";
import { CONNECT_TIMEOUT_SECONDS, openPostgres, schemaVersion } from "./db";
import { isConnectionLoss } from "./storage-errors";
import { postgresConnectError } from "./connect-errors";
import { PostgresDownloadRepository } from "./downloads";
import { PostgresKeyRepository } from "./keys";
import { PostgresUsageLedger } from "./ledger";
import { PostgresMetaRepository } from "./meta";
import { SCHEMA_VERSION } from "./migrations";
import { PostgresReleaseRepository } from "./releases";

export interface PostgresStoresOptions {
  url: string;
  now?: () => number;
  /** A listener failure or a failed re-subscription of the change feed. */
  onChangeFeedError?: (err: unknown) => void;
}

export class PostgresStores implements Stores {
  readonly meta: PostgresMetaRepository;
  readonly changes: PostgresChangeFeed;
  readonly keys: PostgresKeyRepository;
  readonly ledger: PostgresUsageLedger;
  readonly releases: PostgresReleaseRepository;
  readonly downloads: PostgresDownloadRepository;
  readonly announcements: PostgresAnnouncementRepository;
  readonly clients: PostgresClientRepository;
  readonly responses: PostgresStoredResponses;
  readonly refusedParams: PostgresRefusedParams;
  private closed = false;

  /** `sql` is exposed for tests and maintenance commands of this backend; the app never reads it. */
  constructor(
    readonly sql: SQL,
    options: Omit<PostgresStoresOptions, "url"> = {},
  ) {
    const now = options.now ?? Date.now;
    this.meta = new PostgresMetaRepository(sql);
    this.changes = new PostgresChangeFeed(sql, { onError: options.onChangeFeedError });
    this.keys = new PostgresKeyRepository(sql, now);
    this.ledger = new PostgresUsageLedger(sql);
    this.releases = new PostgresReleaseRepository(sql, now, () => this.changes.touch("releases"));
    this.downloads = new PostgresDownloadRepository(sql);
    this.announcements = new PostgresAnnouncementRepository(sql, () => this.changes.touch("announcements"));
    this.clients = new PostgresClientRepository(sql);
    this.responses = new PostgresStoredResponses(sql);
    this.refusedParams = new PostgresRefusedParams(sql);
  }

  async ready(): Promise<{ schemaVersion: number }> {
    const version = await schemaVersion(this.sql);
    if (version !== SCHEMA_VERSION) throw new Error(`schema ${version}, expected ${SCHEMA_VERSION}`);
    return { schemaVersion: version };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changes.close();
    await this.ledger.close();
    await this.sql.close();
  }
}

/** Connects, applies pending migrations and starts listening for changes. */
export async function openPostgresStores(options: PostgresStoresOptions): Promise<PostgresStores> {
  const sql = await openPostgres(options.url);
  const stores = new PostgresStores(sql, options);
  try {
    await stores.changes.start();
  } catch (err) {
    await sql.close();
    throw isConnectionLoss(err) ? postgresConnectError(options.url, err, CONNECT_TIMEOUT_SECONDS) : err;
  }
  return stores;
}
