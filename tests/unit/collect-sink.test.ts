/**
 * A collected reply whose response cannot be kept (the store restarting, a full disk) fails as Gantry's own error:
 * 503 for storage that is unavailable, the error itself for the route to answer, never a broken upstream (502).
 */
import { expect, test } from "bun:test";
import { CollectSink } from "../../src/gateway/stream/sinks/collect-sink";

test("a store failure while keeping is answered as unavailable storage, not as the upstream's", async () => {
  const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  const sink = new CollectSink(new Set(), async () => {
    throw full;
  });
  sink.end(null);
  const thrown = await sink.beforeSettle().catch((err) => err);
  expect(thrown).toBe(full);
  expect(sink.broken(thrown)).toMatchObject({ status: 503, code: "service_unavailable" });
  expect(sink.error).toBe(full);
});

test("a transport failure while reading is the upstream's: 502", () => {
  const sink = new CollectSink(new Set());
  expect(sink.broken(new Error("socket closed"))).toMatchObject({ status: 502 });
});
