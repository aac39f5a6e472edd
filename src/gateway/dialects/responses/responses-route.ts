/**
 * POST /v1/responses: the exchange in the Responses dialect — the upstream's events as they arrive (cleaned where
 * needed), or the collected response object; raw passthrough with X-Upstream-Mode: raw.
 */
import { runExchange } from "../../exchange/exchange";
import type { GatewayDeps } from "../../gateway-deps";
import { responsesDialect } from "./responses-dialect";

export { isRawMode } from "./responses-dialect";

export function handleResponses(deps: GatewayDeps, request: Request): Promise<Response> {
  return runExchange(deps, request, responsesDialect);
}
