/** GET /v1/models: the live model list, filtered by the caller's model permission and serialised once per key. */
import type { GatewayDeps } from "../gateway-deps";
import { runKeyedCall } from "../exchange/keyed-call";
import type { ModelEntry } from "../upstream/model-list";

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

export function handleModels(deps: GatewayDeps, request: Request): Promise<Response> {
  return runKeyedCall(deps, request, "models", async (lease, call) => {
    const all = await deps.models.get();
    // A key's permission can change: the cache entry is per cached key object, which a reload replaces.
    const body = renderFor(all, lease.key.key.id + ":" + lease.key.key.updatedAt, lease.key.allowsModel);
    return new Response(body, { headers: call.headers({ "content-type": "application/json" }) });
  });
}
