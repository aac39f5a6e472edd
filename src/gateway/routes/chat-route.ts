/**
 * POST /v1/chat/completions: translated to a Responses request, sent upstream (always streamed), and the
 * event stream translated back into chat chunks, or collected into one chat.completion.
 */
import { postResponses } from "../upstream/post-responses";
import type { GatewayDeps } from "../gateway-deps";
import { readJsonObject } from "../../http/body";
import { GatewayCall, SSE_HEADERS, checkJsonDepth, requireModel, checkItemCount } from "../call";
import { collectUpstream } from "../pipeline/collect-upstream";
import { UpstreamEventSource } from "../pipeline/event-source";
import { outputBoundFor } from "../wire/output-bound";
import { normalizeResponsesRequest } from "../translate/normalize";
import { functionToolNames } from "../wire/tool-markup";
import { pipelineResponse } from "../pipeline/pipeline";
import { ChatSink } from "../dialects/chat/chat-sink";
import { chatToResponses } from "../translate/chat-to-responses";
import { responsesToChat } from "../translate/responses-to-chat";

function chatId(): string {
  return "chatcmpl-" + crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

function maxTokensOf(body: Record<string, unknown>): { value: number | null; param: string } {
  for (const param of ["max_completion_tokens", "max_tokens"]) {
    const v = body[param];
    if (typeof v === "number" && Number.isFinite(v)) return { value: v, param };
  }
  return { value: null, param: "max_tokens" };
}

export async function handleChatCompletions(deps: GatewayDeps, request: Request): Promise<Response> {
  const call = new GatewayCall(deps, request, "chat.completions");
  try {
    await call.authenticate();
    const { body, bytes, text } = await readJsonObject(request, deps.config.maxBodyBytes);
    checkJsonDepth(text);
    call.model = requireModel(body);
    checkItemCount(body, "messages", deps.config.maxInputItems);
    const translated = chatToResponses(body);
    const maxTokens = maxTokensOf(body);
    await call.admit({ model: call.model, maxTokens: maxTokens.value, maxTokensParam: maxTokens.param, bodyBytes: bytes });

    const intended = call.boundOutput(normalizeResponsesRequest(translated.request, deps.normalizeOptions, "chat"));
    const posted = await postResponses(deps, call.model, intended, call.upstreamAbort.signal);
    const { reply, sent: upstreamRequest } = posted;
    call.upstreamTtfbMs = reply.ttfbMs;
    const source = new UpstreamEventSource(reply.response.body!, deps.config.keepAliveSeconds * 1000, outputBoundFor(intended, posted), posted.sentJson);
    call.meter = source;
    source.maxEventBytes = deps.config.maxUpstreamEventBytes;
    const ctx = { id: chatId(), created: Math.floor(deps.now() / 1000), model: call.model };
    const toolNames = functionToolNames(upstreamRequest.tools);
    if (translated.stream) return streamChunks(deps, call, source, toolNames, { ...ctx, includeUsage: translated.includeUsage });
    const response = await collectUpstream(call, source, toolNames);
    return Response.json(responsesToChat(response, ctx), { headers: call.headers() });
  } catch (err) {
    call.upstreamAbort.abort();
    return call.fail(err);
  }
}

function streamChunks(
  deps: GatewayDeps,
  call: GatewayCall,
  source: UpstreamEventSource,
  toolNames: Set<string>,
  ctx: { id: string; created: number; model: string; includeUsage: boolean },
): Response {
  return pipelineResponse(call, source, new ChatSink(source, toolNames, ctx), deps.stalls, 200, call.headers(SSE_HEADERS));
}
