/**
 * The live model list: fetched from the upstream, cached for a few seconds (at most 10, so a change upstream
 * shows within 15 s), one fetch at a time. The route filters it by the caller's model permission.
 */
import { AppError } from "../../errors";
import type { Upstream } from "./upstream";

export interface ModelEntry {
  id: string;
  [key: string]: unknown;
}

export class ModelList {
  private cached: { at: number; data: ModelEntry[] } | null = null;
  private inFlight: Promise<ModelEntry[]> | null = null;

  constructor(
    private readonly upstream: Upstream,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(): Promise<ModelEntry[]> {
    const t = this.now();
    if (this.cached && t - this.cached.at < this.ttlMs) return this.cached.data;
    this.inFlight ??= this.fetchList().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async fetchList(): Promise<ModelEntry[]> {
    const body = (await this.upstream.listModels()) as { data?: unknown };
    if (!body || !Array.isArray(body.data)) throw new AppError("upstream_error", "The upstream's model list has no 'data' array.");
    const data = body.data.filter((m): m is ModelEntry => !!m && typeof m === "object" && typeof (m as ModelEntry).id === "string");
    this.cached = { at: this.now(), data };
    return data;
  }
}
