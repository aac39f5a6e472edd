/**
 * What `GET /v1/models` lists for a key, and the list in Anthropic's shape; the one model `GET /v1/models/{id}`
 * answers (pure).
 *
 * A key sees the exact names of the operator's model aliases it may use whose target the upstream lists (a pattern
 * names no model a client could pick, and an alias whose target is gone would only fail), then the upstream's
 * models it may use. An alias is listed as its target's entry under the alias's name; an upstream model with the
 * name of an alias is left out, since a call by that name goes to the alias's target.
 */
import { AppError } from "../../errors";

export interface ListedModel<T extends { id: string }> {
  /** The entry as the OpenAI-style list shows it (for an alias: its target's, under the alias's name). */
  entry: T;
  /** For an alias: the upstream model that serves it. */
  target: string | null;
}

export function listedModels<T extends { id: string }>(
  upstream: readonly T[],
  aliases: ReadonlyArray<{ id: string; target: string }>,
  allows: (model: string) => boolean,
): Array<ListedModel<T>> {
  const byId = new Map(upstream.map((m) => [m.id, m]));
  const out: Array<ListedModel<T>> = [];
  const aliasNames = new Set<string>();
  for (const a of aliases) {
    aliasNames.add(a.id.toLowerCase());
    const target = byId.get(a.target);
    if (target && allows(a.id)) out.push({ entry: { ...target, id: a.id }, target: a.target });
  }
  for (const m of upstream) if (!aliasNames.has(m.id.toLowerCase()) && allows(m.id)) out.push({ entry: m, target: null });
  return out;
}

/**
 * The model `GET /v1/models/{id}` answers for a key, or null when it is unknown or not the key's (the two are not told
 * apart: a key learns nothing of the models it may not use). The key's permission judges the name as sent, as for a
 * call; an alias (an exact name or a pattern's) is its target's entry under the name asked for, when the upstream
 * lists the target; any other name is the upstream's own entry.
 */
export function retrievedModel<T extends { id: string }>(
  upstream: readonly T[],
  id: string,
  upstreamOf: (model: string) => string | null,
  allows: (model: string) => boolean,
): ListedModel<T> | null {
  if (!allows(id)) return null;
  const target = upstreamOf(id);
  const entry = upstream.find((m) => m.id === (target ?? id));
  if (!entry) return null;
  return target === null ? { entry, target: null } : { entry: { ...entry, id }, target };
}

/** One entry in OpenAI's shape (`{id, object: "model", created, owned_by}`), whatever the upstream left out of it. */
export function openAiModel(entry: { id: string; created?: unknown; owned_by?: unknown }): { id: string; object: "model"; created: number; owned_by: string } {
  const created = typeof entry.created === "number" && Number.isSafeInteger(entry.created) && entry.created >= 0 ? entry.created : 0;
  const ownedBy = typeof entry.owned_by === "string" ? entry.owned_by : "system";
  return { ...entry, id: entry.id, object: "model", created, owned_by: ownedBy };
}

/** A page of Anthropic's list: `limit` (1–1000, 20 unless given) entries after `after_id` or before `before_id`. */
export interface ModelPage {
  limit: number;
  afterId: string | null;
  beforeId: string | null;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 1000;

/** The page a query asks for; a bad `limit`, or both cursors, is a 400 naming the parameter. */
export function modelPageOf(query: URLSearchParams): ModelPage {
  const rawLimit = query.get("limit");
  let limit = DEFAULT_PAGE_LIMIT;
  if (rawLimit !== null) {
    limit = /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
      throw new AppError("invalid_request", `limit: must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`, { param: "limit" });
    }
  }
  const afterId = query.get("after_id") || null;
  const beforeId = query.get("before_id") || null;
  if (afterId !== null && beforeId !== null) throw new AppError("invalid_request", "after_id and before_id cannot be used together.", { param: "before_id" });
  return { limit, afterId, beforeId };
}

/** One entry of Anthropic's model list (`ModelInfo`); what Gantry cannot know is null. */
export interface AnthropicModel {
  type: "model";
  id: string;
  display_name: string;
  created_at: string;
  lifecycle: "active";
  capabilities: null;
  deprecated_at: null;
  retires_at: null;
  line: null;
  max_input_tokens: null;
  max_tokens: null;
}

export interface AnthropicModelList {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** An OpenAI-style `created` (seconds since 1970) as RFC 3339; the epoch when unknown, as Anthropic's list does. */
function createdAt(created: unknown): string {
  const ms = typeof created === "number" && Number.isSafeInteger(created) && created >= 0 && created < 253402300800 ? created * 1000 : 0;
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

export function anthropicModel(m: ListedModel<{ id: string; created?: unknown }>): AnthropicModel {
  return {
    type: "model",
    id: m.entry.id,
    display_name: m.target === null ? m.entry.id : `${m.entry.id} (${m.target})`,
    created_at: createdAt(m.entry.created),
    lifecycle: "active",
    capabilities: null,
    deprecated_at: null,
    retires_at: null,
    line: null,
    max_input_tokens: null,
    max_tokens: null,
  };
}

/**
 * One page of the list. A cursor that names no listed model (it left the list between two pages) gives an empty
 * last page rather than an error, so a client walking the pages ends cleanly.
 */
export function anthropicModelPage(models: ReadonlyArray<ListedModel<{ id: string; created?: unknown }>>, page: ModelPage): AnthropicModelList {
  let from = 0;
  let to = models.length;
  if (page.afterId !== null) {
    const at = models.findIndex((m) => m.entry.id === page.afterId);
    from = at < 0 ? models.length : at + 1;
    to = Math.min(models.length, from + page.limit);
  } else if (page.beforeId !== null) {
    const at = models.findIndex((m) => m.entry.id === page.beforeId);
    to = at < 0 ? 0 : at;
    from = Math.max(0, to - page.limit);
  } else {
    to = Math.min(models.length, page.limit);
  }
  const data = models.slice(from, to).map(anthropicModel);
  const hasMore = page.beforeId !== null ? from > 0 : to < models.length;
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
