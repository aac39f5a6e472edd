/**
 * Results: per-run records, their medians and ratio spreads, target verdicts, the printed table and the JSON file.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Metric, Scenario, Target } from "./scenarios";

export interface RunRecord {
  side: "baseline" | "target";
  server: string;
  requests: number;
  seconds: number;
  rps: number;
  bytesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU (all its threads) per completed request, µs. */
  cpuUsPerRequest: number;
  /** Server CPU seconds / wall seconds (1.0 = one core busy). */
  serverCpuUtil: number;
  /** Load generator CPU seconds / wall seconds. */
  loadCpuUtil: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
  statusErrors: number;
  socketErrors: number;
  timeouts: number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export type Status = "pass" | "miss" | "info" | "error" | "skipped" | "pending";

export interface TargetVerdict extends Target {
  measured: number | null;
  spread: Spread | null;
  ok: boolean | null;
}

export interface ScenarioResult {
  name: string;
  title: string;
  kind: Scenario["kind"];
  baseline: string | null;
  target: string | null;
  status: Status;
  runs: RunRecord[];
  /** Medians per side. */
  sides: { baseline?: SideSummary; target?: SideSummary };
  /** Per-run target/baseline ratios. */
  ratios: Partial<Record<"rps" | "cpu" | "throughput", Spread>>;
  /** Scenario-specific figures (per-stream memory, SQL counts, durability counts, ...). */
  values: Record<string, number | string>;
  targets: TargetVerdict[];
  notes: string[];
  error?: string;
}

export interface SideSummary {
  server: string;
  rps: number;
  bytesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  serverCpuUtil: number;
  loadCpuUtil: number;
  peakRssMiB: number;
  rssGrowthMiB: number;
}

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function spread(xs: number[]): Spread {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

export function summarizeSide(runs: RunRecord[]): SideSummary | undefined {
  if (runs.length === 0) return undefined;
  const m = (f: (r: RunRecord) => number) => median(runs.map(f));
  return {
    server: runs[0]!.server,
    rps: m((r) => r.rps),
    bytesPerSecond: m((r) => r.bytesPerSecond),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    cpuUsPerRequest: m((r) => r.cpuUsPerRequest),
    serverCpuUtil: m((r) => r.serverCpuUtil),
    loadCpuUtil: m((r) => r.loadCpuUtil),
    peakRssMiB: m((r) => r.peakRssMiB),
    rssGrowthMiB: m((r) => r.peakRssMiB - r.rssBeforeMiB),
  };
}

/** Ratios of the i-th target run to the i-th baseline run (they ran back to back). */
export function pairRatios(runs: RunRecord[]): ScenarioResult["ratios"] {
  const b = runs.filter((r) => r.side === "baseline");
  const t = runs.filter((r) => r.side === "target");
  const n = Math.min(b.length, t.length);
  if (n === 0) return {};
  const of = (f: (r: RunRecord) => number) => spread(Array.from({ length: n }, (_, i) => f(t[i]!) / f(b[i]!)));
  return { rps: of((r) => r.rps), cpu: of((r) => r.cpuUsPerRequest), throughput: of((r) => r.bytesPerSecond) };
}

function metricValue(res: ScenarioResult, metric: Metric): { value: number | null; spread: Spread | null } {
  switch (metric) {
    case "cpu-ratio":
      return { value: res.ratios.cpu?.median ?? null, spread: res.ratios.cpu ?? null };
    case "rps-ratio":
      return { value: res.ratios.rps?.median ?? null, spread: res.ratios.rps ?? null };
    case "throughput-ratio":
      return { value: res.ratios.throughput?.median ?? null, spread: res.ratios.throughput ?? null };
    case "rps": {
      const t = res.runs.filter((r) => r.side === "target").map((r) => r.rps);
      return t.length ? { value: median(t), spread: spread(t) } : { value: null, spread: null };
    }
    case "rss-growth-mib": {
      const t = res.runs.filter((r) => r.side === "target").map((r) => r.peakRssMiB - r.rssBeforeMiB);
      return t.length ? { value: median(t), spread: spread(t) } : { value: null, spread: null };
    }
    default: {
      const v = res.values[metric];
      const s = res.values[`${metric}:spread`];
      return { value: typeof v === "number" ? v : null, spread: typeof s === "string" ? (JSON.parse(s) as Spread) : null };
    }
  }
}

/** Fills in the verdicts and the status (error and skipped/pending stay as they are). */
export function judge(res: ScenarioResult, targets: Target[]): void {
  res.targets = targets.map((t) => {
    const { value, spread: sp } = metricValue(res, t.metric);
    const ok = value === null || Number.isNaN(value) ? null : t.op === "<=" ? value <= t.value : value >= t.value;
    return { ...t, measured: value, spread: sp, ok };
  });
  if (res.status === "error" || res.status === "skipped" || res.status === "pending") return;
  if (res.targets.length === 0) res.status = "info";
  else if (res.targets.some((t) => t.ok === false)) res.status = "miss";
  else if (res.targets.some((t) => t.ok === null)) res.status = "error";
  else res.status = "pass";
}

// ---- printing -------------------------------------------------------------------------------------------

function num(x: number | undefined | null, digits = 0): string {
  if (x === undefined || x === null || Number.isNaN(x)) return "–";
  return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function bytesRate(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return "–";
  return `${(x / 1024 ** 3).toFixed(2)} GiB/s`;
}

function fmtMetric(metric: Metric, v: number | null): string {
  if (v === null || Number.isNaN(v)) return "–";
  switch (metric) {
    case "cpu-ratio":
    case "rps-ratio":
    case "throughput-ratio":
      return `${v.toFixed(2)}×`;
    case "rps":
      return `${num(v)}/s`;
    case "rss-growth-mib":
      return `${v < 0 ? "−" : "+"}${Math.abs(v).toFixed(1)} MiB`;
    case "kib-per-stream":
      return `${v.toFixed(1)} KiB`;
    case "key-sql-per-request":
      return v.toFixed(4);
    case "invalidation-ms":
      return `${num(v)} ms`;
  }
}

function fmtSpread(metric: Metric, s: Spread | null): string {
  if (!s || s.min === s.max) return "";
  const f = (x: number) => fmtMetric(metric, x).replace(/×|\/s| KiB| MiB| ms|^\+/g, "");
  return ` (${f(s.min)}–${f(s.max)})`;
}

/** Markdown table: what the README's Performance section shows. */
export function formatTable(results: ScenarioResult[]): string {
  const rows: string[][] = [];
  for (const r of results) {
    const b = r.sides.baseline;
    const t = r.sides.target;
    const isBytes = r.values.bytes === 1;
    const thr = (s?: SideSummary) => (s ? (isBytes ? bytesRate(s.bytesPerSecond) : num(s.rps)) : "–");
    const verdicts = r.targets.length
      ? r.targets.map((v) => `${v.text}: **${fmtMetric(v.metric, v.measured)}**${fmtSpread(v.metric, v.spread)} ${v.ok === true ? "✓" : v.ok === false ? "✗" : "?"}`).join("<br>")
      : (r.values.summary as string | undefined) ?? "";
    rows.push([
      r.name,
      r.baseline ?? "–",
      t || b ? `${thr(t)} · ${thr(b)}` : "–",
      t ? `${num(t.p50Ms, 2)} / ${num(t.p99Ms, 2)}` : "–",
      t || b ? `${num(t?.cpuUsPerRequest, 0)} · ${num(b?.cpuUsPerRequest, 0)}` : "–",
      verdicts || (r.error ? `error: ${r.error.split("\n")[0]!.slice(0, 120)}` : ""),
      r.status.toUpperCase(),
    ]);
  }
  const head = ["scenario", "baseline", "req/s or bytes/s: Gantry · baseline", "Gantry p50 / p99 ms", "CPU µs/req: Gantry · baseline", "targets: median (min–max of runs)", "status"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const row of rows) lines.push(`| ${row.join(" | ")} |`);
  return lines.join("\n");
}

export function writeJson(dir: string, data: unknown): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = join(dir, `${stamp}.json`);
  writeFileSync(file, JSON.stringify(data, null, 2) + "\n");
  return file;
}
