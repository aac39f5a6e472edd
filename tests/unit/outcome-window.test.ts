/**
 * The rolling window of outcomes kept in a fixed ring: totals as a window of per-second counts would give them,
 * seconds leaving the window at its edge, a clear, a window of another length.
 */
import { describe, expect, test } from "bun:test";
import { OutcomeWindow } from "../../src/gateway/upstream/outcome-window";

describe("OutcomeWindow", () => {
  test("counts requests and failures within the window, and forgets the seconds that leave it", () => {
    const w = new OutcomeWindow();
    const t0 = 1_700_000_000_000;
    expect(w.record(false, t0, 60_000)).toEqual({ failures: 0, requests: 1 });
    expect(w.record(true, t0 + 400, 60_000)).toEqual({ failures: 1, requests: 2 });
    expect(w.record(true, t0 + 30_000, 60_000)).toEqual({ failures: 2, requests: 3 });
    // t0's second is at the window's edge one minute later: out.
    expect(w.record(false, t0 + 60_000, 60_000)).toEqual({ failures: 1, requests: 2 });
    expect(w.record(false, t0 + 95_000, 60_000)).toEqual({ failures: 0, requests: 2 });
    // Long after: everything before has gone, whatever slot it took in the ring.
    expect(w.record(true, t0 + 10 * 60_000, 60_000)).toEqual({ failures: 1, requests: 1 });
  });

  test("matches a per-second count over a random run, the ring wrapped many times", () => {
    const w = new OutcomeWindow();
    const log: Array<[number, boolean]> = [];
    let now = 1_700_000_000_000;
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 5000; i++) {
      now += Math.floor(rand() * 900);
      const failed = rand() < 0.3;
      log.push([now, failed]);
      const oldest = Math.floor((now - 60_000) / 1000);
      const inWindow = log.filter(([t]) => Math.floor(t / 1000) > oldest);
      expect(w.record(failed, now, 60_000)).toEqual({ failures: inWindow.filter(([, f]) => f).length, requests: inWindow.length });
    }
  });

  test("a clock stepping back counts in the latest second; clear empties it", () => {
    const w = new OutcomeWindow();
    w.record(true, 10_000, 60_000);
    expect(w.record(true, 9_000, 60_000)).toEqual({ failures: 2, requests: 2 });
    w.clear();
    expect(w.record(false, 11_000, 60_000)).toEqual({ failures: 0, requests: 1 });
  });

  test("a window of another length starts empty and spans its own seconds", () => {
    const w = new OutcomeWindow();
    w.record(true, 100_000, 60_000);
    expect(w.record(true, 100_500, 2_000)).toEqual({ failures: 1, requests: 1 });
    expect(w.record(false, 101_900, 2_000)).toEqual({ failures: 1, requests: 2 });
    // Second 100 is at the edge of a 2 s window at 102.1 s.
    expect(w.record(false, 102_100, 2_000)).toEqual({ failures: 0, requests: 2 });
  });
});
