import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import {
  aggregateClientStats,
  bucketOnlineSeries,
  minuteOf,
  onlineSince,
  parseSeriesQuery,
  type ClientGroup,
} from "../../src/site/heartbeats/rules/client-stats";

const NOW = Date.parse("2025-06-15T12:34:56.789Z");
const MIN = 60_000;

const g = (over: Partial<ClientGroup>, clients: number): ClientGroup => ({
  app: "",
  version: "",
  platform: "",
  arch: "",
  runtime: "",
  locale: "",
  ...over,
  clients,
});

describe("aggregateClientStats", () => {
  const groups = [
    g({ app: "myapp", version: "1.2.0", platform: "windows", arch: "x64", runtime: "electron", locale: "zh-cn" }, 5),
    g({ app: "myapp", version: "1.2.0", platform: "macos", arch: "arm64", runtime: "electron", locale: "en-us" }, 3),
    g({ app: "myapp", version: "1.1.0", platform: "windows", arch: "x64", runtime: "web", locale: "zh-cn" }, 2),
    g({ app: "other", version: "", platform: "linux", arch: "", runtime: "", locale: "" }, 1),
  ];
  const s = aggregateClientStats(groups, { windowSeconds: 300, knownClients: 40, now: NOW });

  test("the OPERATOR.md shape plus our additions", () => {
    expect(s).toEqual({
      online: 11,
      windowSeconds: 300,
      byVersion: { "1.2.0": 8, "1.1.0": 2, unknown: 1 },
      byPlatform: { windows: 7, macos: 3, linux: 1 },
      byRuntime: { electron: 8, web: 2, unknown: 1 },
      byApp: { myapp: 10, other: 1 },
      byArch: { x64: 7, arm64: 3, unknown: 1 },
      byLocale: { "zh-cn": 7, "en-us": 3, unknown: 1 },
      knownClients: 40,
      generatedAt: "2025-06-15T12:34:56.789Z",
    });
  });
  test("every distribution sums to online", () => {
    for (const d of [s.byVersion, s.byPlatform, s.byRuntime, s.byApp, s.byArch, s.byLocale]) {
      expect(Object.values(d).reduce((a, b) => a + b, 0)).toBe(s.online);
    }
  });
  test("keys ordered by count, then name", () => {
    const t = aggregateClientStats([g({ platform: "b" }, 2), g({ platform: "a" }, 2), g({ platform: "c" }, 3)], { windowSeconds: 300, knownClients: 7, now: NOW });
    expect(Object.keys(t.byPlatform)).toEqual(["c", "a", "b"]);
  });
  test("no one online", () => {
    const t = aggregateClientStats([], { windowSeconds: 300, knownClients: 3, now: NOW });
    expect(t.online).toBe(0);
    expect(t.byVersion).toEqual({});
  });
});

describe("online window", () => {
  test("inclusive lower bound, 5 minutes back", () => {
    expect(onlineSince(NOW, 300)).toBe(NOW - 300_000);
  });
  test("minuteOf floors to the minute", () => {
    expect(new Date(minuteOf(NOW)).toISOString()).toBe("2025-06-15T12:34:00.000Z");
    expect(minuteOf(minuteOf(NOW))).toBe(minuteOf(NOW));
  });
});

describe("parseSeriesQuery", () => {
  const cur = minuteOf(NOW);
  test("default: the last 1440 minutes ending with the current one, per minute", () => {
    const q = parseSeriesQuery({}, NOW);
    expect(q.stepMs).toBe(MIN);
    expect(q.last).toBe(cur);
    expect(q.first).toBe(cur - 1439 * MIN);
  });
  test("30 days default to 30-minute buckets aligned to the step", () => {
    const q = parseSeriesQuery({ minutes: "43200" }, NOW);
    expect(q.stepMs).toBe(30 * MIN);
    expect(q.last % q.stepMs).toBe(0);
    expect(q.last).toBe(Date.parse("2025-06-15T12:30:00.000Z"));
    expect((q.last - q.first) / q.stepMs + 1).toBe(1440);
  });
  test("explicit step", () => {
    const q = parseSeriesQuery({ minutes: "60", step: "300" }, NOW);
    expect(q.stepMs).toBe(5 * MIN);
    expect((q.last - q.first) / q.stepMs + 1).toBe(12);
  });
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ minutes: "0" }, "minutes"],
    [{ minutes: "43201" }, "minutes"],
    [{ minutes: "-5" }, "minutes"],
    [{ minutes: "1.5" }, "minutes"],
    [{ minutes: "abc" }, "minutes"],
    [{ minutes: ["5", "6"] }, "minutes"],
    [{ step: "30" }, "step"],
    [{ step: "90" }, "step"],
    [{ minutes: "43200", step: "60" }, "step"], // 43200 points > 10000
  ];
  for (const [raw, param] of bad) {
    test(`400 ${JSON.stringify(raw)}`, () => {
      let err: unknown;
      try {
        parseSeriesQuery(raw, NOW);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).param).toBe(param);
    });
  }
});

describe("bucketOnlineSeries", () => {
  const first = Date.parse("2025-06-15T12:00:00.000Z");
  test("one point per bucket, null where nothing was sampled", () => {
    const s = bucketOnlineSeries(
      [
        { minute: first, online: 3 },
        { minute: first + 2 * MIN, online: 5 },
      ],
      { first, last: first + 3 * MIN, stepMs: MIN },
      300,
    );
    expect(s).toEqual({
      windowSeconds: 300,
      stepSeconds: 60,
      from: "2025-06-15T12:00:00.000Z",
      to: "2025-06-15T12:04:00.000Z",
      points: [
        { t: "2025-06-15T12:00:00.000Z", online: 3 },
        { t: "2025-06-15T12:01:00.000Z", online: null },
        { t: "2025-06-15T12:02:00.000Z", online: 5 },
        { t: "2025-06-15T12:03:00.000Z", online: null },
      ],
    });
  });
  test("a bucket shows the peak of its minutes, and 0 stays 0 (not null)", () => {
    const s = bucketOnlineSeries(
      [
        { minute: first, online: 2 },
        { minute: first + MIN, online: 9 },
        { minute: first + 4 * MIN, online: 4 },
        { minute: first + 5 * MIN, online: 0 },
      ],
      { first, last: first + 5 * MIN, stepMs: 5 * MIN },
      300,
    );
    expect(s.points.map((p) => p.online)).toEqual([9, 0]);
  });
  test("samples outside the range are ignored", () => {
    const s = bucketOnlineSeries(
      [
        { minute: first - MIN, online: 100 },
        { minute: first + MIN, online: 100 },
      ],
      { first, last: first, stepMs: MIN },
      300,
    );
    expect(s.points).toEqual([{ t: "2025-06-15T12:00:00.000Z", online: null }]);
  });
});
