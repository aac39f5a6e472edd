/**
 * The live model list: fetched from the upstream accounts, cached for a few seconds (at most 10, so a change upstream
 * shows within 15 s), one fetch at a time. With several accounts it is the union of the lists of those that are not
 * out (cooling or disabled), each limited to the models the account serves and with its model map's public names;
 * an account whose list fails is left out, and only when every one fails does the request fail. The route filters
 * it by the caller's model permission.
 */
import { AppError } from "../../errors";
import type { UpstreamAccount } from "./pool-port";
import type { Upstream } from "./upstream";

export interface ModelEntry {
  id: string;
  [key: string]: unknown;
}

/** One account's list, as it reaches the union. */
export interface ModelSource {
  account: UpstreamAccount;
  client: Pick<Upstream, "listModels">;
}

export class ModelList {
  private cached: { at: number; data: ModelEntry[] } | null = null;
  private inFlight: Promise<ModelEntry[]> | null = null;

  constructor(
    private readonly sources: readonly ModelSource[],
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    /** The names of the accounts that are out now (their lists are not asked for). */
    private readonly outNow: (names: string[]) => Promise<Set<string>> = async () => new Set(),
  ) {}

  async get(): Promise<ModelEntry[]> {
    const t = this.now();
    if (this.cached && t - this.cached.at < this.ttlMs) return this.cached.data;
    this.inFlight ??= this.fetchList().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async fetchList(): Promise<ModelEntry[]> {
    let data: ModelEntry[];
    if (this.sources.length === 1) data = await listOf(this.sources[0]!.client);
    else {
      const out = await this.outNow(this.sources.map((s) => s.account.name));
      // Every account out: asked all the same (a list from an account cooling for its rate limit is still true).
      const asked = this.sources.filter((s) => !out.has(s.account.name));
      const results = await Promise.allSettled((asked.length ? asked : this.sources).map(async (s) => servedBy(s.account, await listOf(s.client))));
      const lists = results.filter((r): r is PromiseFulfilledResult<ModelEntry[]> => r.status === "fulfilled").map((r) => r.value);
      if (lists.length === 0) throw (results[0] as PromiseRejectedResult).reason;
      const seen = new Set<string>();
      data = [];
      for (const list of lists) for (const m of list) if (!seen.has(m.id)) seen.add(m.id), data.push(m);
    }
    this.cached = { at: this.now(), data };
    return data;
  }
}

async function listOf(client: Pick<Upstream, "listModels">): Promise<ModelEntry[]> {
  const body = (await client.listModels()) as { data?: unknown };
  if (!body || !Array.isArray(body.data)) throw new AppError("upstream_error", "The upstream's model list has no 'data' array.");
  return body.data.filter((m): m is ModelEntry => !!m && typeof m === "object" && typeof (m as ModelEntry).id === "string");
}

/** An account's list as the pool offers it: the models it serves, and its model map's public names for the ids it lists. */
function servedBy(account: UpstreamAccount, list: ModelEntry[]): ModelEntry[] {
  const all = account.models.includes("*");
  const out = list.filter((m) => all || account.models.includes(m.id));
  for (const [pub, id] of Object.entries(account.modelMap)) {
    const entry = list.find((m) => m.id === id);
    if (entry && !out.some((m) => m.id === pub)) out.push({ ...entry, id: pub });
  }
  return out;
}
