/** HeartbeatService with a fake store: grouping into one write, acknowledgement after it, 503 on failure. */
import { expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { silentLogger } from "../../src/log";
import type { ClientRepository } from "../../src/site/heartbeats/client-repository";
import type { MergedHeartbeat } from "../../src/site/heartbeats/rules/heartbeat-input";
import { HeartbeatService } from "../../src/site/heartbeats/heartbeat-service";
import { heartbeatRecord } from "../support/fixtures";

const hb = heartbeatRecord;

function fakeStore(fail = false) {
  const batches: MergedHeartbeat[][] = [];
  const store = {
    async append(entries: readonly MergedHeartbeat[]) {
      if (fail) throw new Error("disk I/O error");
      batches.push([...entries]);
    },
    fold: async () => 0,
  } as unknown as ClientRepository;
  return { store, batches };
}

test("heartbeats added together are written as one merged batch, and only then acknowledged", async () => {
  const { store, batches } = fakeStore();
  const service = new HeartbeatService(store, silentLogger);
  let acked = 0;
  const all = [hb("a"), hb("b"), hb("a", 2)].map((h) => service.record(h).then(() => acked++));
  expect(acked).toBe(0);
  expect(batches).toHaveLength(0);
  await Promise.all(all);
  expect(acked).toBe(3);
  expect(batches).toHaveLength(1);
  expect(batches[0].map((m) => [m.clientId, m.count])).toEqual([
    ["a", 2],
    ["b", 1],
  ]);
  expect(service.totals).toEqual({ batches: 1, heartbeats: 3 });
  service.close();
});

test("a failed write is a 503 for every heartbeat of the batch", async () => {
  const service = new HeartbeatService(fakeStore(true).store, silentLogger);
  const results = await Promise.allSettled([service.record(hb("a")), service.record(hb("b"))]);
  for (const r of results) {
    expect(r.status).toBe("rejected");
    const e = (r as PromiseRejectedResult).reason as AppError;
    expect(e).toBeInstanceOf(AppError);
    expect(e.status).toBe(503);
    expect(e.headers["retry-after"]).toBe("5");
  }
  service.close();
});

test("close flushes what is waiting; later heartbeats are refused with 503", async () => {
  const { store, batches } = fakeStore();
  const service = new HeartbeatService(store, silentLogger);
  const pending = service.record(hb("last"));
  expect(service.pending).toBe(1);
  service.close();
  await pending;
  expect(batches.flat().map((m) => m.clientId)).toEqual(["last"]);
  await expect(service.record(hb("late"))).rejects.toMatchObject({ status: 503 });
});
