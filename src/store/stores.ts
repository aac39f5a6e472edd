/**
 * Every record Gantry keeps, as one bundle of repositories behind their interfaces: what createDeps needs
 * from a backend. The embedded default is SQLite in the data dir (store/sqlite/stores.ts); another backend
 * (PostgreSQL) supplies the same bundle and nothing above it changes.
 */
import type { KeyRepository } from "../gateway/keys/key-repository";
import type { UsageLedger } from "../gateway/usage/ledger-repository";
import type { AnnouncementRepository } from "../site/announcements/announcement-repository";
import type { DownloadRepository } from "../site/downloads/download-repository";
import type { ClientRepository } from "../site/heartbeats/client-repository";
import type { ReleaseRepository } from "../site/releases/release-repository";
import type { StoredResponseRepository } from "../gateway/responses/stored-response-repository";
import type { RefusedParamRepository } from "../gateway/upstream/refused-params-repository";
import type { ChangeFeed } from "../state/change-feed";
import type { MetaRepository } from "../state/meta-repository";

export interface Stores {
  readonly meta: MetaRepository;
  /** How changes to keys, releases and announcements reach every process's caches. */
  readonly changes: ChangeFeed;
  readonly keys: KeyRepository;
  readonly ledger: UsageLedger;
  readonly releases: ReleaseRepository;
  readonly downloads: DownloadRepository;
  readonly announcements: AnnouncementRepository;
  readonly clients: ClientRepository;
  /** Responses kept for their callers (previous_response_id, item_reference, GET/DELETE /v1/responses/{id}). */
  readonly responses: StoredResponseRepository;
  /** Request parameters the upstream refused as unsupported, per upstream and model (loaded at start). */
  readonly refusedParams: RefusedParamRepository;
  /** Resolves when the backend answers and its schema is the one this binary expects; rejects saying why not. */
  ready(): Promise<{ schemaVersion: number }>;
  /** Commits what is pending (the ledger's group commit), stops the change feed, and closes the connection. */
  close(): Promise<void>;
}
