/**
 * Announcement, heartbeat and online-statistics services (issue 6), built from the shared context:
 * - announcements: CRUD + re-show with the rules of announcement-input.ts, and the public document;
 * - heartbeats: ingest with group commit (answered after the batch committed), folded into clients later;
 * - stats: online count and distributions, the per-minute online series and its sampler.
 */
import type { ServiceContext } from "../service-context";
import { AnnouncementService } from "./announcements/announcement-service";
import { ClientStatsService } from "./heartbeats/client-stats-service";
import { HeartbeatService } from "./heartbeats/heartbeat-service";
import { HeartbeatGate } from "./heartbeats/heartbeat-gate";
import type { ClientRepository } from "./heartbeats/client-repository";

export interface EngagementServices {
  announcements: AnnouncementService;
  /** The clients and online series (`ServiceContext.clients`). */
  clients: ClientRepository;
  heartbeats: HeartbeatService;
  /** What a heartbeat must pass first: the storage reserve and the per-address limits. */
  heartbeatGate: HeartbeatGate;
  stats: ClientStatsService;
  /** Starts background work (the online sampler, the heartbeat fold); one-shot CLI commands never call it. */
  /** Resolves once the first round of background work is done (a caller may also not wait for it). */
  start(): Promise<void>;
  /** Stops timers and commits pending writes. */
  close(): Promise<void>;
}

export function createEngagementServices(ctx: ServiceContext): EngagementServices {
  const clients = ctx.clients;
  const announcements = new AnnouncementService(ctx.announcements, ctx.changes, ctx.now);
  const heartbeats = new HeartbeatService(clients, ctx.log);
  const heartbeatGate = new HeartbeatGate(ctx.heartbeatLimits, ctx.storage, ctx.now);
  const stats = new ClientStatsService(clients, ctx.now, ctx.log);
  return {
    announcements,
    clients,
    heartbeats,
    heartbeatGate,
    stats,
    async start() {
      ctx.storage.start();
      heartbeats.start();
      await stats.start();
    },
    async close() {
      stats.stop();
      ctx.storage.stop();
      heartbeatGate.close();
      await heartbeats.close();
    },
  };
}
