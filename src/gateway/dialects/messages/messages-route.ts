/**
 * POST /v1/messages (and /messages; `?beta=true` as Claude Code sends it changes nothing): the exchange in Anthropic's
 * Messages dialect — translated to a Responses request, sent upstream (always streamed), and the events translated
 * back into Messages events or one `message`.
 */
import { runExchange } from "../../exchange/exchange";
import type { GatewayDeps } from "../../gateway-deps";
import { messagesDialect } from "./messages-dialect";

export function handleMessages(deps: GatewayDeps, request: Request): Promise<Response> {
  return runExchange(deps, request, messagesDialect);
}
