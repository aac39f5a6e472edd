/**
 * GET /v1/responses/{id}, GET /v1/responses/{id}/input_items and DELETE /v1/responses/{id}: a key's stored
 * responses, as OpenAI's API serves them. Another key's, an expired or a deleted one is a 404, never someone
 * else's data. Admission is that of the model list: the key must be usable, and its RPM/RPD count.
 */
import { AppError } from "../../errors";
import type { GatewayCall } from "../exchange/call-state";
import { runKeyedCall } from "../exchange/keyed-call";
import type { GatewayDeps } from "../gateway-deps";

const MAX_ID = 200;

function notFound(id: string): AppError {
  return new AppError("not_found", `Response with id '${id.slice(0, MAX_ID)}' not found.`, { type: "invalid_request_error" });
}

function withKey(deps: GatewayDeps, request: Request, fn: (keyId: string, call: GatewayCall) => Promise<Response>): Promise<Response> {
  return runKeyedCall(deps, request, "responses.stored", (lease, call) => fn(lease.key.key.id, call));
}

export function handleGetResponse(deps: GatewayDeps, request: Request, id: string): Promise<Response> {
  return withKey(deps, request, async (keyId, call) => {
    // The object alone: its input items (possibly thousands) are not part of it, so they are not read.
    const response = id.length <= MAX_ID ? await deps.responses.responseObject(keyId, id, deps.now()) : null;
    if (!response) throw notFound(id);
    return Response.json(response, { headers: call.headers() });
  });
}

export function handleDeleteResponse(deps: GatewayDeps, request: Request, id: string): Promise<Response> {
  return withKey(deps, request, async (keyId, call) => {
    if (id.length > MAX_ID || !(await deps.responses.delete(keyId, id))) throw notFound(id);
    return Response.json({ id, object: "response", deleted: true }, { headers: call.headers() });
  });
}

/** `limit` 1–100 (default 20), `order` asc or desc (default desc, newest first as OpenAI lists), `after` an item id. */
export function handleInputItems(deps: GatewayDeps, request: Request, id: string): Promise<Response> {
  return withKey(deps, request, async (keyId, call) => {
    const query = new URL(request.url).searchParams;
    const limitText = query.get("limit") ?? "20";
    const limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= 100)) throw new AppError("invalid_request", "'limit' must be an integer from 1 to 100.", { param: "limit" });
    const order = query.get("order") ?? "desc";
    if (order !== "asc" && order !== "desc") throw new AppError("invalid_request", "'order' must be 'asc' or 'desc'.", { param: "order" });
    const after = query.get("after");
    // One page read by position, not the whole list: a response may carry thousands of items.
    const page = id.length <= MAX_ID ? await deps.responses.inputItems(keyId, id, deps.now(), { limit, order, after }) : null;
    if (!page) throw notFound(id);
    if (page === "after_not_found") throw new AppError("invalid_request", `No input item with id '${(after ?? "").slice(0, MAX_ID)}' in this response.`, { param: "after" });
    const body = {
      object: "list",
      data: page.items,
      first_id: page.items[0]?.id ?? null,
      last_id: page.items.at(-1)?.id ?? null,
      has_more: page.hasMore,
    };
    return Response.json(body, { headers: call.headers() });
  });
}
