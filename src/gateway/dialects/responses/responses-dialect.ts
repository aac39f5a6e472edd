/**
 * The Responses dialect (POST /v1/responses): the caller's body is already a Responses request. Raw mode sends it
 * upstream as written; a request that continues or keeps a response has its conversation expanded and is kept.
 */
import { optionalBoolean, optionalCount } from "../../../http/json-fields";
import type { Dialect, DialectTurn, ExchangeCall } from "../../exchange/dialect";
import { boundRawText } from "../../limits/rules/output-bounds";
import { rawTextWithModel } from "../../translate/model-aliases";
import type { GatewayDeps } from "../../gateway-deps";
import type { JsonObject, ResponsesRequest } from "../../wire/responses-types";
import { buildConversation, type Conversation } from "../../responses/conversation";
import { ResponseKeeper } from "../../responses/response-keeper";
import { relayRaw } from "./raw-relay";
import { ResponsesSink } from "./responses-sink";

export function isRawMode(headers: Headers): boolean {
  const mode = headers.get("x-upstream-mode");
  if (mode && mode.trim().toLowerCase() === "raw") return true;
  const flag = headers.get("x-upstream-raw-passthrough");
  return flag !== null && /^(true|1|yes)$/i.test(flag.trim());
}

export const responsesDialect: Dialect = {
  endpoint: "responses",
  itemsField: "input",
  read({ body, text, bytes }, deps, request): DialectTurn {
    const raw = isRawMode(request.headers);
    const stream = optionalBoolean(body, "stream") === true;
    const maxTokens = optionalCount(body, "max_output_tokens");
    let keeper: ResponseKeeper | null = null;
    let conversation: Conversation | null = null;
    return {
      maxTokens,
      maxTokensParam: "max_output_tokens",
      stream,
      async prepare(call) {
        // Raw goes as the caller wrote it, but for the upstream's model name and never past the key's output bound.
        if (raw) {
          const sent = rawTextWithModel(body, text, call.model);
          return await relayRaw(deps, call, boundRawText(call.lease, sent.body, sent.text));
        }
        const kept = await keeperFor(deps, call, body, bytes);
        keeper = kept?.keeper ?? null;
        conversation = kept?.conversation ?? null;
        return (kept ? continued(body, kept.input) : body) as ResponsesRequest;
      },
      routing: () => (conversation?.previousId ? { pinned: conversation.previousAccount, encryptedOwners: conversation.encryptedOwners } : null),
      sink: (source, toolNames, call) => new ResponsesSink(call, source, toolNames, keeper),
      keep() {
        const k = keeper;
        return k ? (response) => k.finish(response) : undefined;
      },
      reply: (response) => response,
    };
  },
};

/**
 * Keeping responses for the caller: needed when the request continues one (`previous_response_id`, `item_reference`)
 * or is to be kept (`store` not false, and keeping is on). Otherwise null: the request goes as it came, at no cost.
 */
async function keeperFor(deps: GatewayDeps, call: ExchangeCall, body: JsonObject, bodyBytes: number): Promise<{ keeper: ResponseKeeper; input: JsonObject[]; conversation: Conversation } | null> {
  const keep = deps.config.storedResponsesDays > 0 && body.store !== false;
  const continues =
    (typeof body.previous_response_id === "string" && body.previous_response_id !== "") ||
    (Array.isArray(body.input) && body.input.some((it: JsonObject) => it !== null && typeof it === "object" && it.type === "item_reference"));
  if (!keep && !continues) return null;
  const keyId = call.lease!.key.key.id;
  const conversation = await buildConversation(deps.responses, keyId, body, deps.now(), { maxBytes: deps.config.maxBodyBytes, bodyBytes, maxItems: deps.config.maxInputItems });
  return { keeper: new ResponseKeeper(deps, keyId, call.model, conversation, keep, () => call.upstreamAccount), input: conversation.input, conversation };
}

/** The request with the whole conversation as its input, and no `previous_response_id` (the upstream refuses it). */
function continued(body: JsonObject, input: JsonObject[]): JsonObject {
  const { previous_response_id: _previous, ...rest } = body;
  return { ...rest, input };
}
