/**
 * POST /v1/chat/completions: the exchange in the Chat Completions dialect — translated to a Responses request, sent
 * upstream (always streamed), and the events translated back into chat chunks or one chat.completion.
 */
import { runExchange } from "../../exchange/exchange";
import type { GatewayDeps } from "../../gateway-deps";
import { chatDialect } from "./chat-dialect";

export function handleChatCompletions(deps: GatewayDeps, request: Request): Promise<Response> {
  return runExchange(deps, request, chatDialect);
}
