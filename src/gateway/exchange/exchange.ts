/**
 * The one conversation sequence every dialect shares: authenticate → read and validate → dialect in → admit →
 * normalise and bound → upstream → pipeline → dialect out → settle (the pipeline settles a stream; an error before
 * the first byte is settled and rendered here).
 */
import { checkJsonDepth, readJsonObject } from "../../http/body";
import { checkItemCount } from "../../http/json-fields";
import type { GatewayDeps } from "../gateway-deps";
import { collectUpstream } from "../pipeline/collect-upstream";
import { UpstreamEventSource } from "../pipeline/event-source";
import { pipelineResponse } from "../pipeline/pipeline";
import { normalizeResponsesRequest } from "../translate/normalize";
import { outputBoundFor } from "../wire/output-bound";
import { functionToolNames } from "../wire/tool-markup";
import { admitCall } from "./admit";
import { authenticateCaller } from "./authenticate";
import { GatewayCall } from "./call-state";
import type { Dialect } from "./dialect";
import { SSE_HEADERS, errorReply } from "./error-reply";
import { requireModel } from "./model-field";
import { boundOutput } from "../limits/rules/output-bounds";
import { withModel } from "../translate/model-aliases";

export async function runExchange(deps: GatewayDeps, request: Request, dialect: Dialect): Promise<Response> {
  const call = new GatewayCall(deps, request, dialect.endpoint, dialect.requestIdHeader);
  const settlement = call.settlement;
  try {
    const key = await authenticateCaller(deps, request, dialect.credential?.(request.headers));
    call.keyId = key.key.id;
    const read = await readJsonObject(request, deps.config.maxBodyBytes);
    checkJsonDepth(read.text);
    call.model = requireModel(read.body);
    checkItemCount(read.body, dialect.itemsField, deps.config.maxInputItems);
    const turn = dialect.read(read, deps, request);
    // The key's model list judges the name the caller sent; the upstream gets its alias, if any.
    const upstreamModel = deps.modelAliases.upstreamOf(call.model) ?? call.model;
    await admitCall(deps, call, key, { model: call.model, pricedAs: upstreamModel, maxTokens: turn.maxTokens, maxTokensParam: turn.maxTokensParam, bodyBytes: read.bytes });
    call.aliasTo(upstreamModel);

    const wanted = await turn.prepare(call);
    if (wanted instanceof Response) return wanted;
    const intended = boundOutput(call.lease, normalizeResponsesRequest(withModel(wanted, call.model), deps.normalizeOptions, dialect.inputFrom));
    const routing = turn.routing?.();
    const posted = await deps.upstreamPool.post({
      model: call.model,
      request: intended,
      signal: settlement.upstreamAbort.signal,
      pinned: routing?.pinned,
      encryptedOwners: routing?.encryptedOwners,
      affinity: affinityOf(read.body, key.key.id),
      requestId: call.requestId,
    });
    call.upstreamAccount = posted.account.name;
    settlement.onUpstreamClosed(posted.release);
    call.upstreamTtfbMs = posted.reply.ttfbMs;
    turn.upstreamAnswered?.(call);
    const source = new UpstreamEventSource(posted.body, deps.config.keepAliveSeconds * 1000, outputBoundFor(intended, posted), posted.sentJson);
    call.meter = source;
    source.maxEventBytes = deps.config.maxUpstreamEventBytes;
    const toolNames = functionToolNames(posted.sent.tools);
    if (turn.stream) return pipelineResponse(settlement, source, turn.sink(source, toolNames, call), deps.stalls, 200, call.headers(SSE_HEADERS));
    const response = await collectUpstream(settlement, source, toolNames, turn.keep?.(), turn.collectCut?.());
    return Response.json(turn.reply(response, call), { headers: call.headers() });
  } catch (err) {
    settlement.upstreamAbort.abort();
    return errorReply(deps, call, err, dialect.errorReply);
  }
}

/** What keeps a caller's requests on one account (its prompt cache lives there): the prompt_cache_key, else the API key. */
function affinityOf(body: Record<string, unknown>, keyId: string): string {
  const k = body.prompt_cache_key;
  return typeof k === "string" && k !== "" ? k : keyId;
}
