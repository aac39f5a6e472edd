/**
 * The heartbeat limits in process (heartbeat-limit-store.ts says what they are): per address, this minute's
 * count and this hour's set of client id hashes. Memory is bounded twice: at most `maxAddresses` addresses, and
 * at most `maxTrackedIds` id hashes over all of them; past either, the addresses seen least recently are
 * forgotten first (a forgotten address starts afresh, as a quiet one would).
 */
import { HOUR_MS, MINUTE_MS, clientIdHash, type HeartbeatAdmission, type HeartbeatLimitSettings, type HeartbeatLimitStore } from "./heartbeat-limit-store";

interface AddressWindows {
  minute: number;
  count: number;
  hour: number;
  ids: Set<number>;
}

const ADMITTED: HeartbeatAdmission = { ok: true };

export class InProcessHeartbeatLimits implements HeartbeatLimitStore {
  private readonly addresses = new Map<string, AddressWindows>();
  private tracked = 0;

  constructor(
    private readonly limits: HeartbeatLimitSettings,
    private readonly bounds = { maxAddresses: 100_000, maxTrackedIds: 1_000_000 },
  ) {}

  admit(addressKey: string, clientId: string, now: number): HeartbeatAdmission {
    const { perMinute, clientsPerHour } = this.limits;
    if (perMinute <= 0 && clientsPerHour <= 0) return ADMITTED;
    const minute = Math.floor(now / MINUTE_MS);
    const hour = Math.floor(now / HOUR_MS);
    let w = this.addresses.get(addressKey);
    if (w === undefined) {
      w = { minute, count: 0, hour, ids: new Set() };
      this.addresses.set(addressKey, w);
    } else if (w.minute !== minute) {
      // Re-inserted once a minute, not at every heartbeat: the Map stays in order of the minute an address was
      // last active, so eviction drops the stalest ones.
      this.addresses.delete(addressKey);
      this.addresses.set(addressKey, w);
      w.minute = minute;
      w.count = 0;
      if (w.hour !== hour) {
        this.tracked -= w.ids.size;
        w.hour = hour;
        w.ids = new Set();
      }
    }
    if (perMinute > 0 && w.count >= perMinute) return { ok: false, reason: "rate", retryAfterMs: (minute + 1) * MINUTE_MS - now };
    if (clientsPerHour > 0) {
      const id = clientIdHash(clientId);
      if (!w.ids.has(id)) {
        if (w.ids.size >= clientsPerHour) return { ok: false, reason: "clients", retryAfterMs: (hour + 1) * HOUR_MS - now };
        w.ids.add(id);
        this.tracked += 1;
      }
    }
    w.count += 1;
    this.evict();
    return ADMITTED;
  }

  private evict(): void {
    while (this.addresses.size > this.bounds.maxAddresses || this.tracked > this.bounds.maxTrackedIds) {
      const [oldest, w] = this.addresses.entries().next().value!;
      this.addresses.delete(oldest);
      this.tracked -= w.ids.size;
    }
  }

  close(): void {
    this.addresses.clear();
    this.tracked = 0;
  }
}
