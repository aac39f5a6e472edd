/**
 * A gateway request that is not a conversation (the model list, a key's stored responses): the same key check and
 * admission with no model (rates only: no slot, no reservation), the answer, and the one settlement.
 */
import type { CallDeps } from "../gateway-deps";
import type { Lease } from "../limits/admission";
import { admitCall } from "./admit";
import { authenticateCaller } from "./authenticate";
import { GatewayCall } from "./call-state";
import { errorReply } from "./error-reply";
import type { Endpoint } from "./settlement";
import type { Dialect } from "./dialect";

/** Where the caller's style puts its key, its request id and its errors (Anthropic's clients: `x-api-key`, `request-id`, their envelope). */
export type CallerStyle = Pick<Dialect, "credential" | "requestIdHeader" | "errorReply">;

export async function runKeyedCall(
  deps: CallDeps,
  request: Request,
  endpoint: Endpoint,
  answer: (lease: Lease, call: GatewayCall) => Promise<Response>,
  style: CallerStyle = {},
): Promise<Response> {
  const call = new GatewayCall(deps, request, endpoint, style.requestIdHeader);
  try {
    const key = await authenticateCaller(deps, request, style.credential?.(request.headers));
    const lease = await admitCall(deps, call, key, { model: null, maxTokens: null, bodyBytes: 0 });
    const res = await answer(lease, call);
    call.settlement.finish(res.status, null);
    return res;
  } catch (err) {
    return errorReply(deps, call, err, style.errorReply);
  }
}
