/** What a feature's services are built from: the repositories they use, settings, logger and clock. */
import type { Config } from "./config";
import type { Logger } from "./log";
import type { MetaRepository } from "./state/meta-repository";
import type { ChangeFeed } from "./state/change-feed";
import type { Mirror } from "./site/releases/mirror";
import type { ReleaseRepository } from "./site/releases/release-repository";
import type { DownloadRepository } from "./site/downloads/download-repository";
import type { AnnouncementRepository } from "./site/announcements/announcement-repository";
import type { ClientRepository } from "./site/heartbeats/client-repository";
import type { HeartbeatLimitStore } from "./site/heartbeats/heartbeat-limit-store";
import type { StorageReserve } from "./state/storage-reserve";

export interface ServiceContext {
  config: Config;
  meta: MetaRepository;
  /** Change notification for keys, releases and announcements (any process, any instance). */
  changes: ChangeFeed;
  releases: ReleaseRepository;
  downloads: DownloadRepository;
  announcements: AnnouncementRepository;
  clients: ClientRepository;
  /** Per-address heartbeat limits (in process, or shared in Redis). */
  heartbeatLimits: HeartbeatLimitStore;
  /** The free space kept for billing: the site's writes stop first. */
  storage: StorageReserve;
  /** Where asset bytes are kept (the file system under the data dir by default). */
  mirror: Mirror;
  log: Logger;
  now: () => number;
  fetch: typeof fetch;
}
