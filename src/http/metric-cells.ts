/**
 * Counters and histograms for the per-request metrics, counted in plain numbers and read by prom-client's
 * registry only when Prometheus scrapes. prom-client's own label children hash their labels on every call,
 * which was several percent of a small request's CPU; a cell here is found once and then only added to.
 * Both register with a prom-client Registry like its own metrics and render the same exposition.
 */
import type { Registry } from "prom-client";

type Labels = Record<string, string | number>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

abstract class Cells<C> {
  readonly aggregator = "sum";
  protected readonly cells = new Map<string, { labels: Labels; cell: C }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The cell of one combination of label values (in the order of `labelNames`); keep it and add to it. */
  cell(...values: string[]): C {
    const key = values.join("\u0000");
    let entry = this.cells.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ""));
      entry = { labels, cell: this.fresh() };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }

  protected abstract fresh(): C;
  protected abstract values(): MetricValue[];
  abstract reset(): void;

  get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  abstract readonly type: "counter" | "histogram";
}

export class CounterCells extends Cells<{ value: number }> {
  readonly type = "counter";

  protected fresh() {
    return { value: 0 };
  }

  protected values(): MetricValue[] {
    return [...this.cells.values()].map(({ labels, cell }) => ({ labels, value: cell.value }));
  }

  reset(): void {
    for (const { cell } of this.cells.values()) cell.value = 0;
  }
}

export class HistogramCell {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

export class HistogramCells extends Cells<HistogramCell> {
  readonly type = "histogram";

  constructor(name: string, help: string, labelNames: readonly string[], private readonly bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  protected fresh() {
    return new HistogramCell(this.bounds);
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += cell.counts[i]!;
        out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      });
      out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: cell.count });
      out.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
      out.push({ metricName: `${this.name}_count`, labels, value: cell.count });
    }
    return out;
  }

  reset(): void {
    for (const { cell } of this.cells.values()) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}
