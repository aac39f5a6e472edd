/**
 * The HeartbeatLimitStore suite against Redis (a real server started for the run), then what only a shared store
 * must show: two instances on one Redis enforce one limit per address, and an unreachable Redis falls back to
 * the in-process limits instead of refusing heartbeats.
 */
import { describe, expect, test } from "bun:test";
import { InProcessHeartbeatLimits } from "../../src/site/heartbeats/heartbeat-limits";
import { RedisHeartbeatLimits } from "../../src/store/redis/heartbeat-limits";
import type { HeartbeatLimitSettings } from "../../src/site/heartbeats/heartbeat-limit-store";
import { redisUnavailable, redisUrl } from "../support/redis";
import { heartbeatLimitsConformance } from "./heartbeat-limits.suite";

const unavailable = redisUnavailable();

async function store(limits: HeartbeatLimitSettings, errors?: unknown[]): Promise<RedisHeartbeatLimits> {
  return new RedisHeartbeatLimits(await redisUrl(), limits, new InProcessHeartbeatLimits(limits), { onError: (e) => errors?.push(e) });
}

if (unavailable) {
  console.warn(`Redis heartbeat limit tests skipped: ${unavailable}`);
  test.skip(`Redis heartbeat limit tests: ${unavailable}`, () => {});
} else {
  heartbeatLimitsConformance("Redis", (limits) => store(limits));

  describe("Redis heartbeat limits shared by instances", () => {
    test("three instances admit one address's limits once between them, not once each", async () => {
      const limits = { perMinute: 0, clientsPerHour: 40 };
      const instances = await Promise.all([store(limits), store(limits), store(limits)]);
      try {
        const address = `203.0.113.7-${crypto.randomUUID()}`;
        const now = Date.now();
        const verdicts = await Promise.all(Array.from({ length: 300 }, (_, i) => instances[i % 3]!.admit(address, `flood-${i}`, now)));
        expect(verdicts.filter((v) => v.ok)).toHaveLength(40);
        const rate = await Promise.all([store({ perMinute: 25, clientsPerHour: 0 }), store({ perMinute: 25, clientsPerHour: 0 })]);
        try {
          const other = `203.0.113.8-${crypto.randomUUID()}`;
          const beats = await Promise.all(Array.from({ length: 100 }, (_, i) => rate[i % 2]!.admit(other, "one-client", now)));
          expect(beats.filter((v) => v.ok)).toHaveLength(25);
        } finally {
          for (const s of rate) s.close();
        }
      } finally {
        for (const s of instances) s.close();
      }
    });

    test("Redis unreachable: heartbeats are limited in process (not refused), and the outage is reported once", async () => {
      const errors: unknown[] = [];
      const limits = { perMinute: 0, clientsPerHour: 2 };
      const s = new RedisHeartbeatLimits("redis://127.0.0.1:1", limits, new InProcessHeartbeatLimits(limits), { onError: (e) => errors.push(e) });
      try {
        const verdicts = [];
        for (const id of ["a", "b", "c"]) verdicts.push(await s.admit("192.0.2.1", id, 0));
        expect(verdicts.map((v) => v.ok)).toEqual([true, true, false]);
        expect(errors).toHaveLength(1);
      } finally {
        s.close();
      }
    });
  });
}
