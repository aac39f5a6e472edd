/**
 * The pool of one's kept answer to "did an operator disable the account": read at most once a second, one read for
 * concurrent calls, read again at once after an operator's change here (and a read started before it not taken
 * for fresh), automatic states never counted, a failed read keeping the last answer.
 */
import { describe, expect, test } from "bun:test";
import { MemoryPoolState } from "../../src/gateway/upstream/pool-state-memory";
import { SOLE_STATE_MAX_AGE_MS, SoleAccountGate } from "../../src/gateway/upstream/sole-account-gate";

function setup() {
  const state = new MemoryPoolState();
  let reads = 0;
  let fail = false;
  let t = 0;
  const counted = {
    read: (names: readonly string[]) => {
      reads++;
      return fail ? Promise.reject(new Error("down")) : state.read(names);
    },
  };
  const gate = new SoleAccountGate(counted, "default", () => t);
  return { state, gate, reads: () => reads, advance: (ms: number) => void (t += ms), failReads: (f: boolean) => void (fail = f) };
}

describe("SoleAccountGate", () => {
  test("the first call reads; later ones within a second do not; concurrent ones share one read", async () => {
    const s = setup();
    const [a, b] = [s.gate.disabledByOperator(), s.gate.disabledByOperator()];
    expect(await a).toBe(false);
    expect(await b).toBe(false);
    expect(s.reads()).toBe(1);
    await s.state.disable("default", "disabled by an operator", true);
    s.advance(SOLE_STATE_MAX_AGE_MS - 1);
    expect(s.gate.disabledByOperator()).toBe(false);
    s.advance(1);
    expect(await s.gate.disabledByOperator()).toBe(true);
    expect(s.gate.disabledByOperator()).toBe(true);
    expect(s.reads()).toBe(2);
  });

  test("invalidate: the next call reads at once, and a read started before it does not count as fresh", async () => {
    const s = setup();
    expect(await s.gate.disabledByOperator()).toBe(false);
    s.advance(SOLE_STATE_MAX_AGE_MS);
    const stale = s.gate.disabledByOperator();
    await s.state.disable("default", "disabled by an operator", true);
    s.gate.invalidate();
    await stale;
    expect(await s.gate.disabledByOperator()).toBe(true);
    await s.state.enable("default");
    s.gate.invalidate();
    expect(await s.gate.disabledByOperator()).toBe(false);
  });

  test("automatic states (an auth failure, a cooldown) never count; a failed read keeps the last answer", async () => {
    const s = setup();
    await s.state.disable("default", "auth", false);
    await s.state.cool("default", null, Date.now() + 60_000, "rate_limited");
    expect(await s.gate.disabledByOperator()).toBe(false);
    await s.state.disable("default", "disabled by an operator", true);
    s.gate.invalidate();
    expect(await s.gate.disabledByOperator()).toBe(true);
    s.failReads(true);
    s.gate.invalidate();
    expect(await s.gate.disabledByOperator()).toBe(true);
    s.failReads(false);
    expect(await s.gate.disabledByOperator()).toBe(true);
  });
});
