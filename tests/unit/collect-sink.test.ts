/**
 * A collected reply's failures while reading the upstream are the upstream's (502). One while keeping the finished
 * response is not the sink's: the pipeline withholds the answer (tests/integration/keep-failure.test.ts).
 */
import { expect, test } from "bun:test";
import { CollectSink } from "../../src/gateway/pipeline/collect-sink";

test("a transport failure while reading is the upstream's: 502", () => {
  const sink = new CollectSink(new Set());
  expect(sink.broken(new Error("socket closed"))).toMatchObject({ status: 502 });
});
