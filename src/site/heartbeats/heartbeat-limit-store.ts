/**
 * The heartbeat limits' port. Heartbeats are unauthenticated, so what one client address can do with them is
 * bounded twice: how many it may send per minute (`perMinute`), and how many different client ids it may report
 * per hour (`clientsPerHour`), which bounds the rows it can add to the clients table (kept 90 days). Windows are
 * fixed (the minute, the hour of the clock); a refused heartbeat consumes nothing. Addresses are counted as
 * `addressKey` gives them (an IPv6 client: its /64).
 *
 * Implementations: InProcessHeartbeatLimits (heartbeat-limits.ts, per process) and the Redis one
 * (store/redis/heartbeat-limits.ts), shared by the instances.
 */

export interface HeartbeatLimitSettings {
  /** Heartbeats per address per minute; 0 = no limit. */
  perMinute: number;
  /** Different client ids per address per hour; 0 = no limit. */
  clientsPerHour: number;
}

export type HeartbeatAdmission = { ok: true } | { ok: false; reason: "rate" | "clients"; retryAfterMs: number };

export interface HeartbeatLimitStore {
  /** Decides, and when admitted counts the heartbeat (and the id, if new in this hour's window). */
  admit(addressKey: string, clientId: string, now: number): HeartbeatAdmission | Promise<HeartbeatAdmission>;
  close(): void;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/**
 * A client id's 32-bit FNV-1a hash: what the windows remember instead of the id (at most 128 characters), so
 * memory per address stays small. Two ids sharing a hash count as one, which only ever lets a heartbeat through.
 */
export function clientIdHash(clientId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < clientId.length; i++) {
    h ^= clientId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
