/**
 * POST /v1/messages/count_tokens (and /messages/count_tokens; `?beta=true` as Claude Code sends it changes nothing):
 * a Messages request's input tokens, counted by Gantry (count-tokens-dialect.ts).
 */
import { runExchange } from "../../exchange/exchange";
import type { GatewayDeps } from "../../gateway-deps";
import { countTokensDialect } from "./count-tokens-dialect";

export function handleCountTokens(deps: GatewayDeps, request: Request): Promise<Response> {
  return runExchange(deps, request, countTokensDialect);
}
