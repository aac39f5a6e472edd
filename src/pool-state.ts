/**
 * Where the upstream pool's health state lives: in Redis when GANTRY_REDIS_URL is set (every instance shares the
 * cooldowns, probes and in-flight counts), in this process otherwise. Part of the composition root, beside deps.ts,
 * which is the other place that names a backend.
 */
import type { Config } from "./config";
import type { PoolStateStore } from "./gateway/upstream/pool-port";
import { MemoryPoolState } from "./gateway/upstream/pool-state-memory";
import type { Logger } from "./log";
import { RedisPoolState } from "./store/redis/pool-state";

export interface ClosablePoolState extends PoolStateStore {
  close(): void;
}

export function poolStateFor(config: Pick<Config, "redisUrl" | "redisLeaseSeconds">, log: Logger, now: () => number = Date.now): ClosablePoolState {
  if (!config.redisUrl) return Object.assign(new MemoryPoolState(now), { close() {} });
  return new RedisPoolState(config.redisUrl, {
    leaseMs: config.redisLeaseSeconds * 1000,
    now,
    // Whatever GANTRY_REDIS_FAIL_OPEN says: the pool's state only steers calls, it bills nothing, so an outage must
    // not turn away a call an account could serve.
    fallback: () => new MemoryPoolState(now),
    onError: (err) => log.warn("redis unreachable: upstream accounts are judged by this instance alone (every account healthy to begin with)", { error: (err as Error).message }),
    onRecover: () => log.info("redis reachable again: upstream account health is shared again"),
  });
}
