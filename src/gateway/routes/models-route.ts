/**
 * The live model list: fetched from the upstream, cached for a few seconds (at most 10, so a change upstream
 * shows within 15 s), one fetch at a time, and filtered by the caller's model permission.
 */
import { AppError } from "../../errors";
import type { AppDeps } from "../../deps";
import { GatewayCall } from "../call";
import type { Upstream } from "../upstream/upstream";

interface ModelEntry {
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

/** Serialised lists per key, for as long as the upstream list they came from is the cached one. */
const rendered = new WeakMap<ModelEntry[], Map<string, string>>();

function renderFor(all: ModelEntry[], keyId: string, allows: (model: string) => boolean): string {
  let byKey = rendered.get(all);
  if (!byKey) rendered.set(all, (byKey = new Map()));
  let body = byKey.get(keyId);
  if (body === undefined) {
    body = JSON.stringify({ object: "list", data: all.filter((m) => allows(m.id)) });
    byKey.set(keyId, body);
  }
  return body;
}

export async function handleModels(deps: AppDeps, request: Request): Promise<Response> {
  const call = new GatewayCall(deps, request, "models");
  try {
    await call.authenticate();
    const lease = call.admit({ model: null, maxTokens: null, bodyBytes: 0 });
    const all = await deps.models.get();
    // A key's permission can change: the cache entry is per cached key object, which a reload replaces.
    const body = renderFor(all, lease.key.key.id + ":" + lease.key.key.updatedAt, lease.key.allowsModel);
    call.finish(200, null);
    return new Response(body, {
      headers: call.headers({ "content-type": "application/json" }),
    });
  } catch (err) {
    return call.fail(err);
  }
}
