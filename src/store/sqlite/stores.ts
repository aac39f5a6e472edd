/**
 * The embedded backend: every repository on one SQLite connection (WAL, synchronous=FULL), opened and
 * migrated here. The only place that decides which SQLite class serves which interface.
 */
import { SqliteStoredResponses } from "./stored-responses";
import type { Database } from "bun:sqlite";
import type { Stores } from "../stores";
import { SqliteRefusedParams } from "./refused-params";
import { SqliteAnnouncementRepository } from "./announcements";
import { SqliteChangeFeed } from "./change-feed";
import { SqliteClientRepository } from "./clients";
import { openDatabase, schemaVersion } from "./db";
import { SqliteDownloadRepository } from "./downloads";
import { SqliteKeyRepository } from "./keys";
import { SqliteUsageLedger } from "./ledger";
import { SqliteMetaRepository } from "./meta";
import { SCHEMA_VERSION } from "./migrations";
import { SqliteReleaseRepository } from "./releases";

export interface SqliteStoresOptions {
  /** ":memory:" for tests; a file path otherwise (created with its directory unless existingOnly). */
  path: string;
  /** Refuse to create the database: DatabaseMissingError when there is none (CLI commands that only read). */
  existingOnly?: boolean;
  now?: () => number;
  /** A failed read of the change counters (the next poll tries again). */
  onChangeFeedError?: (err: unknown) => void;
}

export class SqliteStores implements Stores {
  readonly meta: SqliteMetaRepository;
  readonly changes: SqliteChangeFeed;
  readonly keys: SqliteKeyRepository;
  readonly ledger: SqliteUsageLedger;
  readonly releases: SqliteReleaseRepository;
  readonly downloads: SqliteDownloadRepository;
  readonly announcements: SqliteAnnouncementRepository;
  readonly clients: SqliteClientRepository;
  readonly responses: SqliteStoredResponses;
  readonly refusedParams: SqliteRefusedParams;
  private closed = false;

  /** `db` is exposed for tests and maintenance commands of this backend; the app never reads it. */
  constructor(
    readonly db: Database,
    options: Omit<SqliteStoresOptions, "path" | "existingOnly"> = {},
  ) {
    const now = options.now ?? Date.now;
    this.meta = new SqliteMetaRepository(db);
    this.changes = new SqliteChangeFeed(db, { onError: options.onChangeFeedError });
    this.keys = new SqliteKeyRepository(db, now);
    this.ledger = new SqliteUsageLedger(db);
    this.releases = new SqliteReleaseRepository(db, now, () => this.changes.touch("releases"));
    this.downloads = new SqliteDownloadRepository(db);
    this.announcements = new SqliteAnnouncementRepository(db, () => this.changes.touch("announcements"));
    this.clients = new SqliteClientRepository(db);
    this.responses = new SqliteStoredResponses(db);
    this.refusedParams = new SqliteRefusedParams(db);
  }

  async ready(): Promise<{ schemaVersion: number }> {
    const version = schemaVersion(this.db);
    if (version !== SCHEMA_VERSION) throw new Error(`schema ${version}, expected ${SCHEMA_VERSION}`);
    return { schemaVersion: version };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changes.close();
    await this.ledger.close();
    this.db.close();
  }
}

/** Opens (and migrates) the database at `options.path` with every repository on it. */
export function openSqliteStores(options: SqliteStoresOptions): SqliteStores {
  return new SqliteStores(openDatabase(options.path, { existingOnly: options.existingOnly }), options);
}
