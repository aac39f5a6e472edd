/**
 * The Prometheus implementation of Metrics (prom-client), one Registry per app instance so tests and a
 * second app in one process never collide.
 *
 * Hot path: the per-request series are plain-number cells (metric-cells.ts) looked up in nested Maps keyed by
 * the values we already hold, so counting a request allocates and hashes nothing once its combination was seen.
 * Values that live elsewhere (in-flight streams, clients online, heartbeats, downloads, sync state) are read
 * only when Prometheus scrapes, through `collect` callbacks.
 */
import { Counter, Gauge, Registry } from "prom-client";
import { CounterCells, HistogramCells } from "./metric-cells";
import { COMMIT, VERSION } from "../version";
import type { Metrics } from "./metrics";

type Value<T> = T | Promise<T>;

/** Where the scrape-time values come from; each is read once per scrape (from a store, so it may be a promise). */
export interface MetricSources {
  inFlight(): Value<number>;
  heartbeatsIngested(): Value<number>;
  clientsOnline(): Value<number>;
  downloads(): Value<number>;
  sync(): Value<{ running: boolean; lastStatus: string | null; lastFinishedAt: string | null }>;
  /** Each upstream account's state and streams in flight now (read from the pool's shared state at scrape). */
  upstreams?(): Value<{ name: string; state: string; inFlight: number }[]>;
}

/** The states an upstream account can be in (each gets a 0/1 series, so a state change is visible in one query). */
const ACCOUNT_STATES = ["healthy", "cooling", "probing", "disabled"] as const;

/** Refusals decided by admission (README "Admission and error codes"); other error codes are not refusals. */
const ADMISSION_CODES = new Set([
  "missing_api_key",
  "invalid_api_key",
  "api_key_disabled",
  "api_key_expired",
  "api_key_not_yet_valid",
  "model_not_allowed",
  "max_tokens_exceeded",
  "quota_exceeded",
  "rate_limit_rpm",
  "rate_limit_rpd",
  "concurrent_limit",
]);

const SYNC_STATUSES = ["ok", "partial", "failed"] as const;

/** Seconds; gateway calls run from milliseconds (refusals) to many minutes (long streams). */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const TTFB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];

/** A two-level cache of label children: no allocation after the first sighting of a combination. */
function cache2<C>(make: (a: string, b: string) => C) {
  const outer = new Map<string, Map<string | number, C>>();
  return (a: string, b: string | number): C => {
    let inner = outer.get(a);
    if (!inner) outer.set(a, (inner = new Map()));
    let child = inner.get(b);
    if (!child) inner.set(b, (child = make(a, String(b))));
    return child;
  };
}

export function createPrometheusMetrics(sources: MetricSources): Metrics & { registry: Registry } {
  const registry = new Registry();
  const registers = [registry];

  const http = new CounterCells("gantry_http_requests_total", "HTTP requests by route template, method and status.", ["route", "method", "status"], registry);
  const gatewayRequests = new CounterCells("gantry_gateway_requests_total", "Gateway requests by endpoint and status.", ["endpoint", "status"], registry);
  const refusals = new CounterCells("gantry_admission_refusals_total", "Gateway requests refused by admission, by error code.", ["code"], registry);
  const duration = new HistogramCells(
    "gantry_gateway_request_duration_seconds",
    "Total time of a gateway request, from arrival to the end of its reply.",
    ["endpoint"],
    DURATION_BUCKETS,
    registry,
  );
  const ttfb = new HistogramCells("gantry_upstream_ttfb_seconds", "Time until the upstream's response headers arrived.", ["endpoint"], TTFB_BUCKETS, registry);
  // Per upstream account (label values are configured account names: bounded, never a key).
  const upstreamRequests = new CounterCells("gantry_upstream_requests_total", "Attempts sent to each upstream account.", ["account"], registry);
  const upstreamFailures = new CounterCells("gantry_upstream_failures_total", "Failed attempts per upstream account, by kind.", ["account", "kind"], registry);
  const upstreamFailovers = new CounterCells("gantry_upstream_failovers_total", "Calls that moved on from this account to another before their first content.", ["account"], registry);
  const upstreamCooldowns = new CounterCells("gantry_upstream_cooldowns_total", "Times each upstream account was cooled (or its cooldown extended).", ["account"], registry);
  // gantry_upstream_ttfb_seconds is the per-endpoint series above; one name cannot carry two label sets.
  const accountTtfb = new HistogramCells(
    "gantry_upstream_account_ttfb_seconds",
    "Time to the first byte of an attempt, per upstream account.",
    ["account"],
    TTFB_BUCKETS,
    registry,
  );
  const tokens = new CounterCells("gantry_tokens_total", "Tokens of settled gateway requests, by direction.", ["direction"], registry);
  // Both series exist from the start (at 0), so rate() works from the first scrape.
  const inputTokens = tokens.cell("input");
  const outputTokens = tokens.cell("output");

  new Gauge({
    name: "gantry_gateway_in_flight_requests",
    help: "Gateway requests (streams included) holding a concurrency lease now.",
    registers,
    async collect() {
      this.set(await sources.inFlight());
    },
  });
  new Gauge({
    name: "gantry_upstream_in_flight",
    help: "Streams running on each upstream account now (over every instance when the state is in Redis).",
    labelNames: ["account"] as const,
    registers,
    async collect() {
      this.reset();
      for (const a of (await sources.upstreams?.()) ?? []) this.labels(a.name).set(a.inFlight);
    },
  });
  new Gauge({
    name: "gantry_upstream_state",
    help: "1 for each upstream account's current state (healthy, cooling, probing, disabled), 0 for the others.",
    labelNames: ["account", "state"] as const,
    registers,
    async collect() {
      this.reset();
      for (const a of (await sources.upstreams?.()) ?? []) for (const s of ACCOUNT_STATES) this.labels(a.name, s).set(a.state === s ? 1 : 0);
    },
  });
  new Counter({
    name: "gantry_heartbeats_ingested_total",
    help: "Client heartbeats written since the process started.",
    registers,
    async collect() {
      const n = await sources.heartbeatsIngested();
      this.reset();
      this.inc(n);
    },
  });
  new Gauge({
    name: "gantry_clients_online",
    help: "Distinct clients that reported within the online window (5 minutes).",
    registers,
    async collect() {
      this.set(await sources.clientsOnline());
    },
  });
  new Counter({
    name: "gantry_downloads_total",
    help: "Counted asset downloads of the releases that exist (deleting a release lowers it, read as a reset).",
    registers,
    async collect() {
      const n = await sources.downloads();
      this.reset();
      this.inc(n);
    },
  });
  new Gauge({
    name: "gantry_release_sync_running",
    help: "1 while a release sync runs in this process.",
    registers,
    async collect() {
      this.set((await sources.sync()).running ? 1 : 0);
    },
  });
  new Gauge({
    name: "gantry_release_sync_last_status",
    help: "1 for the status of the last finished release sync (ok, partial, failed), 0 for the others.",
    labelNames: ["status"] as const,
    registers,
    async collect() {
      const last = (await sources.sync()).lastStatus;
      for (const s of SYNC_STATUSES) this.labels(s).set(last === s ? 1 : 0);
    },
  });
  new Gauge({
    name: "gantry_release_sync_last_finished_timestamp_seconds",
    help: "When the last release sync finished (Unix seconds); 0 if none has.",
    registers,
    async collect() {
      const at = (await sources.sync()).lastFinishedAt;
      const ms = at ? Date.parse(at) : Number.NaN;
      this.set(Number.isNaN(ms) ? 0 : ms / 1000);
    },
  });
  new Gauge({
    name: "gantry_build_info",
    help: "Always 1; the labels name the running build.",
    labelNames: ["version", "commit"] as const,
    registers,
  }).set({ version: VERSION, commit: COMMIT }, 1);
  new Gauge({
    name: "gantry_process_start_time_seconds",
    help: "When this process started (Unix seconds).",
    registers,
  }).set(Math.round(Date.now() - performance.now()) / 1000);
  new Gauge({
    name: "gantry_process_resident_memory_bytes",
    help: "Resident memory of this process.",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });

  type HttpCell = ReturnType<typeof http.cell>;
  const httpCell = (() => {
    const byRoute = new Map<string, (method: string, status: number) => HttpCell>();
    return (route: string, method: string, status: number) => {
      let byMethod = byRoute.get(route);
      if (!byMethod) byRoute.set(route, (byMethod = cache2((m, s) => http.cell(route, m, s))));
      return byMethod(method, status);
    };
  })();
  const gatewayCell = cache2((endpoint, status) => gatewayRequests.cell(endpoint, status));
  const refusalCell = cache2((code) => refusals.cell(code));
  const durationCell = cache2((endpoint) => duration.cell(endpoint));
  const ttfbCell = cache2((endpoint) => ttfb.cell(endpoint));
  const accountCell = <C>(make: (account: string) => C) => cache2((account) => make(account));
  const upstreamRequestCell = accountCell((a) => upstreamRequests.cell(a));
  const upstreamFailureCell = cache2((a, kind) => upstreamFailures.cell(a, kind));
  const upstreamFailoverCell = accountCell((a) => upstreamFailovers.cell(a));
  const upstreamCooldownCell = accountCell((a) => upstreamCooldowns.cell(a));
  const accountTtfbCell = accountCell((a) => accountTtfb.cell(a));

  return {
    registry,
    gatewayRequest(endpoint, status, errorCode, seconds, upstreamTtfbMs) {
      gatewayCell(endpoint, status).value++;
      durationCell(endpoint, "").observe(seconds);
      if (upstreamTtfbMs !== null) ttfbCell(endpoint, "").observe(upstreamTtfbMs / 1000);
      if (errorCode !== null && ADMISSION_CODES.has(errorCode)) refusalCell(errorCode, "").value++;
    },
    httpRequest(route, method, status) {
      httpCell(route, method, status).value++;
    },
    tokensSettled(input, output) {
      if (input > 0) inputTokens.value += input;
      if (output > 0) outputTokens.value += output;
    },
    upstreamAttempt(account) {
      upstreamRequestCell(account, "").value++;
    },
    upstreamFailure(account, kind) {
      upstreamFailureCell(account, kind).value++;
    },
    upstreamFailover(account) {
      upstreamFailoverCell(account, "").value++;
    },
    upstreamCooled(account) {
      upstreamCooldownCell(account, "").value++;
    },
    upstreamFirstByte(account, seconds) {
      accountTtfbCell(account, "").observe(seconds);
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
