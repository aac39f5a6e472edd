/**
 * The pure parts of the back office's charts (src/admin/assets/charts.browser.js), run without a browser:
 * count axes have whole-number ticks, bucket units read as words, time ticks fall on round times, and the
 * online chart's current bucket is never below the live count shown on the card beside it.
 */
import { describe, expect, test } from "bun:test";

interface Charts {
  niceScale(max: number, integer: boolean): { max: number; step: number; steps: number };
  bucketName(seconds: number): string;
  timeTicks(x0: number, x1: number, most: number): number[];
  withLiveOnline(points: Array<{ t: string; online: number | null }>, live: number | null): Array<{ t: string; online: number | null }>;
}

// A path held in a variable: the browser module has no type declarations of its own.
const CHARTS_PATH = "../../src/admin/assets/charts.browser.js";
const charts = (await import(CHARTS_PATH)) as Charts;

const ticksOf = (max: number, integer: boolean) => {
  const s = charts.niceScale(max, integer);
  return Array.from({ length: s.steps + 1 }, (_, i) => Number((s.step * i).toFixed(6)));
};

describe("chart y axis", () => {
  test("counts get whole-number ticks, however small the numbers", () => {
    for (const max of [0, 0.19, 1, 2, 3, 7, 18.75, 99, 480, 12_345, 3_200_000]) {
      const ticks = ticksOf(max, true);
      expect({ max, whole: ticks.every(Number.isInteger) }).toEqual({ max, whole: true });
      expect(ticks.at(-1)!).toBeGreaterThanOrEqual(max);
      expect(ticks.length).toBeLessThanOrEqual(6);
    }
    expect(ticksOf(1, true)).toEqual([0, 1]);
    expect(ticksOf(3, true)).toEqual([0, 1, 2, 3]);
    expect(ticksOf(7, true)).toEqual([0, 2, 4, 6, 8]);
    expect(ticksOf(0, true)).toEqual([0, 1]);
  });

  test("rates keep fractional ticks on round steps", () => {
    expect(ticksOf(0.19, false)).toEqual([0, 0.05, 0.1, 0.15, 0.2]);
    expect(ticksOf(18.75, false)).toEqual([0, 5, 10, 15, 20]);
  });
});

describe("chart units and times", () => {
  test("a bucket is named in the unit it is", () => {
    expect(charts.bucketName(60)).toBe("minute");
    expect(charts.bucketName(900)).toBe("15 minutes");
    expect(charts.bucketName(7200)).toBe("2 hours");
    expect(charts.bucketName(43200)).toBe("12 hours");
    expect(charts.bucketName(86400)).toBe("day");
  });

  test("time ticks fall on round UTC times, at most as many as asked", () => {
    const end = Date.parse("2025-06-10T13:47:00Z");
    const day = charts.timeTicks(end - 86_400_000, end, 6);
    expect(day.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(["18:00", "00:00", "06:00", "12:00"]);
    const hour = charts.timeTicks(end - 3_600_000, end, 6);
    expect(hour.every((t) => t % 600_000 === 0)).toBe(true);
    expect(hour.length).toBeLessThanOrEqual(6);
  });

  test("the online chart's current bucket includes the live count", () => {
    const points = [
      { t: "a", online: 4 },
      { t: "b", online: 2 },
    ];
    expect(charts.withLiveOnline(points, 7).map((p) => p.online)).toEqual([4, 7]);
    expect(charts.withLiveOnline(points, 1).map((p) => p.online)).toEqual([4, 2]);
    expect(charts.withLiveOnline([{ t: "a", online: null }], 3).map((p) => p.online)).toEqual([3]);
  });
});
