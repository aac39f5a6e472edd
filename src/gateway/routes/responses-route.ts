/**
 * POST /v1/responses: admission, normalisation, the forced-streaming upstream call, and the reply —
 * the upstream's events as they arrive (cleaned where needed), or the collected response object.
 */
import { postResponses } from "../upstream/post-responses";
import type { GatewayDeps } from "../gateway-deps";
import { readJsonObject } from "../../http/body";
import { GatewayCall, SSE_HEADERS, checkJsonDepth, optionalBoolean, optionalCount, requireModel, checkItemCount } from "../call";
import { collectUpstream } from "../pipeline/collect-upstream";
import { UpstreamEventSource } from "../pipeline/event-source";
import { outputBoundFor } from "../wire/output-bound";
import { normalizeResponsesRequest } from "../translate/normalize";
import { relayRaw } from "../dialects/responses/raw-relay";
import type { JsonObject, ResponsesRequest } from "../responses-types";
import { buildConversation } from "../responses/conversation";
import { ResponseKeeper } from "../responses/response-keeper";
import { pipelineResponse } from "../pipeline/pipeline";
import { ResponsesSink } from "../dialects/responses/responses-sink";
import { functionToolNames } from "../wire/tool-markup";

export function isRawMode(headers: Headers): boolean {
  const mode = headers.get("x-upstream-mode");
  if (mode && mode.trim().toLowerCase() === "raw") return true;
  const flag = headers.get("x-upstream-raw-passthrough");
  return flag !== null && /^(true|1|yes)$/i.test(flag.trim());
}

export async function handleResponses(deps: GatewayDeps, request: Request): Promise<Response> {
  const call = new GatewayCall(deps, request, "responses");
  try {
    await call.authenticate();
    const { body, bytes, text } = await readJsonObject(request, deps.config.maxBodyBytes);
    checkJsonDepth(text);
    call.model = requireModel(body);
    checkItemCount(body, "input", deps.config.maxInputItems);
    const raw = isRawMode(request.headers);
    const wantsStream = optionalBoolean(body, "stream") === true;
    const maxTokens = optionalCount(body, "max_output_tokens");
    await call.admit({ model: call.model, maxTokens, maxTokensParam: "max_output_tokens", bodyBytes: bytes });

    // Raw goes as the caller wrote it, but never past the key's output bound.
    if (raw) return await relayRaw(deps, call, call.boundRawText(body, text));

    const keeper = await keeperFor(deps, call, body, bytes);
    const wanted = (keeper ? continued(body, keeper.input) : body) as ResponsesRequest;
    const intended = call.boundOutput(normalizeResponsesRequest(wanted, deps.normalizeOptions));
    const posted = await postResponses(deps, call.model, intended, call.upstreamAbort.signal);
    const { reply, sent: upstreamRequest } = posted;
    call.upstreamTtfbMs = reply.ttfbMs;
    const source = new UpstreamEventSource(reply.response.body!, deps.config.keepAliveSeconds * 1000, outputBoundFor(intended, posted), posted.sentJson);
    call.meter = source;
    source.maxEventBytes = deps.config.maxUpstreamEventBytes;
    const toolNames = functionToolNames(upstreamRequest.tools);
    if (wantsStream) return streamToCaller(deps, call, source, toolNames, keeper?.keeper ?? null);
    const response = await collectUpstream(call, source, toolNames, keeper ? (r) => keeper.keeper.finish(r) : undefined);
    return Response.json(response, { headers: call.headers() });
  } catch (err) {
    call.upstreamAbort.abort();
    return call.fail(err);
  }
}

/**
 * Keeping responses for the caller: needed when the request continues one (`previous_response_id`, `item_reference`)
 * or is to be kept (`store` not false, and keeping is on). Otherwise null: the request goes as it came, at no cost.
 */
async function keeperFor(deps: GatewayDeps, call: GatewayCall, body: JsonObject, bodyBytes: number): Promise<{ keeper: ResponseKeeper; input: JsonObject[] } | null> {
  const keep = deps.config.storedResponsesDays > 0 && body.store !== false;
  const continues =
    (typeof body.previous_response_id === "string" && body.previous_response_id !== "") ||
    (Array.isArray(body.input) && body.input.some((it: JsonObject) => it !== null && typeof it === "object" && it.type === "item_reference"));
  if (!keep && !continues) return null;
  const keyId = call.lease!.key.key.id;
  const conversation = await buildConversation(deps.responses, keyId, body, deps.now(), { maxBytes: deps.config.maxBodyBytes, bodyBytes, maxItems: deps.config.maxInputItems });
  return { keeper: new ResponseKeeper(deps, keyId, call.model, conversation, keep), input: conversation.input };
}

/** The request with the whole conversation as its input, and no `previous_response_id` (the upstream refuses it). */
function continued(body: JsonObject, input: JsonObject[]): JsonObject {
  const { previous_response_id: _previous, ...rest } = body;
  return { ...rest, input };
}

function streamToCaller(deps: GatewayDeps, call: GatewayCall, source: UpstreamEventSource, toolNames: Set<string>, keeper: ResponseKeeper | null): Response {
  return pipelineResponse(call, source, new ResponsesSink(call, source, toolNames, keeper), deps.stalls, 200, call.headers(SSE_HEADERS));
}
