/** The HeartbeatLimitStore suite in process, and the bounds on its memory. */
import { expect, test } from "bun:test";
import { InProcessHeartbeatLimits } from "../../src/site/heartbeats/heartbeat-limits";
import { heartbeatLimitsConformance } from "./heartbeat-limits.suite";

heartbeatLimitsConformance("in process", async (limits) => new InProcessHeartbeatLimits(limits));

test("memory is bounded: past the address or id budget the stalest addresses are forgotten", () => {
  const store = new InProcessHeartbeatLimits({ perMinute: 0, clientsPerHour: 100 }, { maxAddresses: 10, maxTrackedIds: 50 });
  for (let a = 0; a < 30; a++) for (let i = 0; i < 10; i++) store.admit(`10.0.0.${a}`, `id-${i}`, 0);
  const inside = store as unknown as { addresses: Map<string, unknown>; tracked: number };
  expect(inside.addresses.size).toBeLessThanOrEqual(10);
  expect(inside.tracked).toBeLessThanOrEqual(50);
  // The most recent address is still remembered whole.
  expect([...inside.addresses.keys()].at(-1)).toBe("10.0.0.29");
});
