/**
 * GET /v1/models: the live model list, filtered by the caller's model permission, with the exact names of the
 * operator's aliases. OpenAI's shape, serialised once per key; Anthropic's (paged) when the request carries
 * `anthropic-version`, as the Anthropic SDKs and Claude Code send it. GET /v1/models/{id}: one of them, in the same
 * two shapes; a 404 in the caller's envelope for a model the key may not use or the upstream does not list.
 */
import type { GatewayDeps } from "../gateway-deps";
import { runKeyedCall } from "../exchange/keyed-call";
import type { ModelEntry } from "../upstream/model-list";
import { anthropicModel, anthropicModelPage, listedModels, modelPageOf, openAiModel, retrievedModel, type ListedModel } from "../translate/model-listing";
import { AppError } from "../../errors";
import { messagesDialect } from "../dialects/messages/messages-dialect";

interface KeyView {
  listed: Array<ListedModel<ModelEntry>>;
  /** The OpenAI-style body, made on first use. */
  openai?: string;
}

/** What each key sees, for as long as the upstream list it came from is the cached one. */
const views = new WeakMap<ModelEntry[], Map<string, KeyView>>();

function viewFor(deps: GatewayDeps, all: ModelEntry[], keyId: string, allows: (model: string) => boolean): KeyView {
  let byKey = views.get(all);
  if (!byKey) views.set(all, (byKey = new Map()));
  let view = byKey.get(keyId);
  if (view === undefined) {
    view = { listed: listedModels(all, deps.modelAliases.names, allows) };
    byKey.set(keyId, view);
  }
  return view;
}

export function handleModels(deps: GatewayDeps, request: Request): Promise<Response> {
  const anthropic = request.headers.has("anthropic-version");
  return runKeyedCall(deps, request, "models", async (lease, call) => {
    // Checked before the upstream is asked: a bad query costs nothing.
    const page = anthropic ? modelPageOf(new URL(request.url).searchParams) : null;
    const all = await deps.models.get();
    // A key's permission can change: the cache entry is per cached key object, which a reload replaces.
    const view = viewFor(deps, all, lease.key.key.id + ":" + lease.key.key.updatedAt, lease.key.allowsModel);
    const headers = call.headers({ "content-type": "application/json" });
    if (page) return new Response(JSON.stringify(anthropicModelPage(view.listed, page)), { headers });
    view.openai ??= JSON.stringify({ object: "list", data: view.listed.map((m) => m.entry) });
    return new Response(view.openai, { headers });
  }, anthropic ? messagesDialect : undefined);
}

export function handleModel(deps: GatewayDeps, request: Request, id: string): Promise<Response> {
  const anthropic = request.headers.has("anthropic-version");
  return runKeyedCall(deps, request, "models", async (lease, call) => {
    const all = await deps.models.get();
    const found = retrievedModel(all, id, deps.modelAliases.upstreamOf, lease.key.allowsModel);
    // Unknown and forbidden alike: which models exist beyond the key's is not the key's to learn.
    if (found === null) throw new AppError("not_found", `The model '${id.slice(0, 200)}' does not exist or you do not have access to it.`, { param: "model" });
    const body = anthropic ? anthropicModel(found) : openAiModel(found.entry);
    return new Response(JSON.stringify(body), { headers: call.headers({ "content-type": "application/json" }) });
  }, anthropic ? messagesDialect : undefined);
}
