/**
 * The heartbeat limits in Redis (with GANTRY_REDIS_URL), so the instances behind a load balancer share them: per
 * address, a counter per minute and a set of client id hashes per hour, decided and counted by one Lua script
 * (a refused heartbeat changes nothing), each key expiring with its window. A client of its own (no MULTI or
 * script state shared with the gateway's limiter); concurrent heartbeats' scripts are pipelined by the client.
 *
 * Redis unreachable: heartbeats are not billing, so they are admitted against the in-process limits (this
 * instance's own windows) rather than refused; the outage is logged once, and Redis is used again as soon as it
 * answers.
 */
import { RedisClient } from "bun";
import { RedisScripts } from "./redis-scripts";
import { HOUR_MS, MINUTE_MS, clientIdHash, type HeartbeatAdmission, type HeartbeatLimitSettings, type HeartbeatLimitStore } from "../../site/heartbeats/heartbeat-limit-store";

/** KEYS: minute counter, hour id set. ARGV: per minute, clients per hour, id hash, minute ttl ms, hour ttl ms. */
const ADMIT_HEARTBEAT = `
local perMinute = tonumber(ARGV[1])
local perHour = tonumber(ARGV[2])
if perMinute > 0 and tonumber(redis.call('GET', KEYS[1]) or '0') >= perMinute then return 1 end
if perHour > 0 and redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 0 then
  if redis.call('SCARD', KEYS[2]) >= perHour then return 2 end
  redis.call('SADD', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
if perMinute > 0 then
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return 0
`;

const ADMITTED: HeartbeatAdmission = { ok: true };

export class RedisHeartbeatLimits implements HeartbeatLimitStore {
  private readonly client: RedisClient;
  private readonly scripts: RedisScripts;
  private down = false;

  constructor(
    url: string,
    private readonly limits: HeartbeatLimitSettings,
    /** Used while Redis cannot be reached. */
    private readonly fallback: HeartbeatLimitStore,
    private readonly events: { onError?: (err: unknown) => void; onRecover?: () => void } = {},
  ) {
    // No offline queue: while Redis is down, commands fail at once (and the fallback answers) instead of waiting.
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: 2000, autoReconnect: true, maxRetries: 3 });
    this.scripts = new RedisScripts(this.client);
  }

  async admit(addressKey: string, clientId: string, now: number): Promise<HeartbeatAdmission> {
    const { perMinute, clientsPerHour } = this.limits;
    if (perMinute <= 0 && clientsPerHour <= 0) return ADMITTED;
    const minute = Math.floor(now / MINUTE_MS);
    const hour = Math.floor(now / HOUR_MS);
    // One hash tag per address: both keys of a script in one slot of a Redis cluster.
    const tag = `{hb:${addressKey}}`;
    let verdict: number;
    try {
      verdict = Number(
        await this.script([`${tag}:m:${minute}`, `${tag}:h:${hour}`], [
          String(perMinute),
          String(clientsPerHour),
          String(clientIdHash(clientId)),
          String((minute + 1) * MINUTE_MS - now + 1000),
          String((hour + 1) * HOUR_MS - now + 1000),
        ]),
      );
    } catch (err) {
      if (!this.down) {
        this.down = true;
        this.events.onError?.(err);
      }
      return this.fallback.admit(addressKey, clientId, now);
    }
    if (this.down) {
      this.down = false;
      this.events.onRecover?.();
    }
    if (verdict === 1) return { ok: false, reason: "rate", retryAfterMs: (minute + 1) * MINUTE_MS - now };
    if (verdict === 2) return { ok: false, reason: "clients", retryAfterMs: (hour + 1) * HOUR_MS - now };
    return ADMITTED;
  }

  private script(keys: string[], args: string[]): Promise<unknown> {
    return this.scripts.run(ADMIT_HEARTBEAT, keys, args);
  }

  close(): void {
    this.fallback.close();
    this.client.close();
  }
}
