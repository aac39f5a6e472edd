/**
 * Model aliases (GANTRY_MODEL_ALIASES): the name a caller sends (`claude-sonnet-4-5`, as Claude Code and the
 * Anthropic SDKs send) mapped to the upstream model that serves it (`gpt-5.2`). A name may hold `*` for any run of
 * characters. An exact name wins over every pattern; among patterns the longest wins (it says more of the name),
 * and of equally long ones the first written. Names compare in lower case, as the keys' model lists do, so an
 * alias cannot be missed by writing a name in another case. One step only: a target is never looked up again, so
 * a table cannot loop.
 */
import { compileModelList, type ModelMatcher } from "../limits/rules/model-match";

export interface ModelAliases {
  /** The upstream's name for a model the caller named, or null when no alias applies. */
  upstreamOf(model: string): string | null;
  /** The exact names (not the patterns: they name no model a client could pick), each with its target. */
  readonly names: ReadonlyArray<{ id: string; target: string }>;
}

/** Names already resolved through the patterns; bounded, since callers choose the names. */
const CACHE_LIMIT = 1000;

export function compileModelAliases(table: Readonly<Record<string, string>>): ModelAliases {
  const exact = new Map<string, string>();
  const names: Array<{ id: string; target: string }> = [];
  const patterns: Array<{ matches: ModelMatcher; length: number; target: string }> = [];
  for (const [name, target] of Object.entries(table)) {
    if (name.includes("*")) patterns.push({ matches: compileModelList([name]), length: name.length, target });
    else {
      exact.set(name.toLowerCase(), target);
      names.push({ id: name, target });
    }
  }
  // Array sort is stable: equally long patterns keep the order they were written in.
  patterns.sort((a, b) => b.length - a.length);
  if (exact.size === 0 && patterns.length === 0) return { upstreamOf: () => null, names };
  const resolved = new Map<string, string | null>();
  const upstreamOf = (model: string): string | null => {
    const name = model.toLowerCase();
    const hit = exact.get(name);
    if (hit !== undefined) return hit === model ? null : hit;
    if (patterns.length === 0) return null;
    let target = resolved.get(name);
    if (target === undefined) {
      target = patterns.find((p) => p.matches(name))?.target ?? null;
      if (resolved.size < CACHE_LIMIT) resolved.set(name, target);
    }
    return target === model ? null : target;
  };
  return { upstreamOf, names };
}

/** The request for the upstream's model: itself when it already names it (the common case costs no copy). */
export function withModel<T extends { model?: unknown }>(request: T, model: string): T {
  return request.model === model ? request : { ...request, model };
}

/**
 * The same for a raw passthrough body, which goes upstream as the caller's text: untouched unless an alias changed
 * the model, then serialised again with the upstream's name.
 */
export function rawTextWithModel(body: Record<string, unknown>, text: string, model: string): { body: Record<string, unknown>; text: string } {
  if (body.model === model) return { body, text };
  const aliased = { ...body, model };
  return { body: aliased, text: JSON.stringify(aliased) };
}
