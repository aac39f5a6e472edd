/** poolStateFor: Redis when GANTRY_REDIS_URL is set, the in-process store otherwise. */
import { expect, test } from "bun:test";
import { MemoryPoolState } from "../../src/gateway/upstream/pool-state-memory";
import { createLogger } from "../../src/log";
import { poolStateFor } from "../../src/pool-state";
import { RedisPoolState } from "../../src/store/redis/pool-state";

const log = createLogger("error", () => {});

test("no Redis URL: the in-process store; a Redis URL: the Redis store (nothing is sent before the first use)", () => {
  const memory = poolStateFor({ redisUrl: "", redisLeaseSeconds: 30 }, log);
  expect(memory).toBeInstanceOf(MemoryPoolState);
  memory.close();
  const redis = poolStateFor({ redisUrl: "redis://127.0.0.1:1", redisLeaseSeconds: 30 }, log);
  expect(redis).toBeInstanceOf(RedisPoolState);
  redis.close();
});
