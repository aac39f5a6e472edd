/**
 * An update check that carries a client id counts as that client's activity in the online statistics, as a
 * heartbeat does (heartbeat-service.ts); fields the protocol does not send are null, so the values the client
 * reported before are kept. Not awaited: a feed is answered whether or not the write succeeds.
 */
import type { Logger } from "../../../log";
import type { HeartbeatService } from "../../heartbeats/heartbeat-service";
import type { HeartbeatRecord } from "../../heartbeats/rules/heartbeat-input";

export interface UpdateCheckDeps {
  engagement: { heartbeats: Pick<HeartbeatService, "record"> };
  now: () => number;
}

export function countUpdateCheck(deps: UpdateCheckDeps, log: Pick<Logger, "warn"> | null, check: Pick<HeartbeatRecord, "clientId"> & Partial<HeartbeatRecord>): void {
  const record: HeartbeatRecord = { app: null, version: null, platform: null, arch: null, runtime: null, locale: null, ...check, at: deps.now() };
  deps.engagement.heartbeats.record(record).catch((err) => log?.warn("update check not counted", { error: (err as Error).message }));
}
