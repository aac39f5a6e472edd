/**
 * /admin/api/metrics/overview: the Overview page's chart data, from the usage ledger (requests, errors,
 * tokens, upstream time to first byte per bucket) and the online statistics. Behind the admin guard.
 * Every bucket of the range is present (zeros, or null latency where no request reached the upstream),
 * so a chart needs no gap logic of its own.
 */
import { Elysia, t } from "elysia";
import type { KeyRepository } from "../gateway/keys/key-repository";
import type { LimiterStore } from "../gateway/limits/limiter";
import type { LatencyPoint, UsageLedger, UsagePoint } from "../gateway/usage/ledger-repository";
import type { EngagementServices } from "../site/engagement-services";
import type { StoredResponseRepository } from "../gateway/responses/stored-response-repository";

const MINUTE = 60_000;

/** Range -> bucket size: about 50-100 points each. */
export const RANGES = {
  "1h": { minutes: 60, bucketMinutes: 1 },
  "24h": { minutes: 1440, bucketMinutes: 15 },
  "7d": { minutes: 7 * 1440, bucketMinutes: 120 },
  "30d": { minutes: 30 * 1440, bucketMinutes: 720 },
} as const;
export type RangeName = keyof typeof RANGES;

export interface OverviewPoint {
  t: string;
  requests: number;
  errors: number;
  /** Percent of the bucket's requests that ended with status >= 400; null without requests. */
  errorRate: number | null;
  requestsPerMinute: number;
  inputTokens: number;
  outputTokens: number;
  avgTtfbMs: number | null;
  maxTtfbMs: number | null;
}

/** Pure: the ledger's sparse buckets -> one point per bucket from `first` for `count` buckets. */
export function fillOverview(usage: UsagePoint[], latency: LatencyPoint[], first: number, bucketMs: number, count: number): OverviewPoint[] {
  const byUsage = new Map(usage.map((u) => [u.bucket, u]));
  const byLatency = new Map(latency.map((l) => [l.bucket, l]));
  const points: OverviewPoint[] = [];
  for (let i = 0; i < count; i++) {
    const bucket = first + i * bucketMs;
    const u = byUsage.get(bucket);
    const l = byLatency.get(bucket);
    const requests = u?.requests ?? 0;
    const errors = u?.errors ?? 0;
    points.push({
      t: new Date(bucket).toISOString(),
      requests,
      errors,
      errorRate: requests ? Math.round((errors / requests) * 10_000) / 100 : null,
      requestsPerMinute: Math.round((requests / (bucketMs / MINUTE)) * 100) / 100,
      inputTokens: u?.inputTokens ?? 0,
      outputTokens: u?.outputTokens ?? 0,
      avgTtfbMs: l?.avgTtfbMs == null ? null : Math.round(l.avgTtfbMs),
      maxTtfbMs: l?.maxTtfbMs ?? null,
    });
  }
  return points;
}

export interface MetricsApiDeps {
  ledger: Pick<UsageLedger, "flush" | "series" | "latencySeries">;
  keys: Pick<KeyRepository, "list">;
  limiter: Pick<LimiterStore, "totalInFlight">;
  engagement: Pick<EngagementServices, "stats">;
  responses: Pick<StoredResponseRepository, "stats">;
  config: { storedResponsesDays: number };
  now: () => number;
}

export function metricsApi(deps: MetricsApiDeps) {
  return new Elysia({ name: "admin-metrics", prefix: "/admin/api/metrics" }).get(
    "/overview",
    async ({ query }) => {
      const range = (query.range ?? "1h") as RangeName;
      const { minutes, bucketMinutes } = RANGES[range];
      const bucketMs = bucketMinutes * MINUTE;
      const count = Math.ceil(minutes / bucketMinutes);
      const last = Math.floor(deps.now() / bucketMs) * bucketMs;
      const first = last - (count - 1) * bucketMs;
      // Pending ledger rows are written first, so a request that just ended is in the chart.
      await deps.ledger.flush();
      const [usage, latency, keys, clientsOnline, online, stored] = await Promise.all([
        deps.ledger.series(first, bucketMs),
        deps.ledger.latencySeries(first, bucketMs),
        deps.keys.list(),
        deps.engagement.stats.online(),
        deps.engagement.stats.series({ minutes: String(minutes), step: String(bucketMinutes * 60) }),
        deps.responses.stats(),
      ]);
      const points = fillOverview(usage, latency, first, bucketMs, count);
      const totals = points.reduce(
        (acc, p) => ({
          requests: acc.requests + p.requests,
          errors: acc.errors + p.errors,
          inputTokens: acc.inputTokens + p.inputTokens,
          outputTokens: acc.outputTokens + p.outputTokens,
        }),
        { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0 },
      );
      const withTtfb = points.filter((p) => p.avgTtfbMs !== null);
      return {
        range,
        bucketSeconds: bucketMs / 1000,
        generatedAt: new Date(deps.now()).toISOString(),
        totals: {
          ...totals,
          errorRate: totals.requests ? Math.round((totals.errors / totals.requests) * 10_000) / 100 : null,
          avgTtfbMs: withTtfb.length ? Math.round(withTtfb.reduce((n, p) => n + p.avgTtfbMs!, 0) / withTtfb.length) : null,
        },
        now: {
          clientsOnline,
          inFlight: deps.limiter.totalInFlight(),
          activeKeys: keys.filter((k) => k.status === "active").length,
          keys: keys.length,
          storedResponses: { ...stored, retentionDays: deps.config.storedResponsesDays },
        },
        points,
        online,
      };
    },
    {
      query: t.Object({
        range: t.Optional(t.Union([t.Literal("1h"), t.Literal("24h"), t.Literal("7d"), t.Literal("30d")])),
      }),
    },
  );
}
