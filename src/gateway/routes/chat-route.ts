/**
 * POST /v1/chat/completions: translated to a Responses request, sent upstream (always streamed), and the
 * event stream translated back into chat chunks, or collected into one chat.completion.
 */
import { postResponses } from "../upstream/post-responses";
import type { GatewayDeps } from "../gateway-deps";
import { readJsonObject } from "../../http/body";
import { GatewayCall, SSE_HEADERS, checkJsonDepth, requireModel } from "../call";
import { collectUpstream } from "../stream/collect-upstream";
import { IDLE, UpstreamEventSource } from "../stream/event-source";
import { outputBoundFor } from "../stream/output-bound";
import { mapStreamFailure, upstreamStreamError } from "../stream/failure";
import { normalizeResponsesRequest } from "../translate/normalize";
import { functionToolNames } from "../stream/tool-markup";
import { SSE_DONE, SSE_KEEPALIVE, encodeData } from "../stream/sse/encode";
import { createResponsesStreamRewriter } from "../stream/stream-rewrite";
import { chatToResponses } from "../translate/chat-to-responses";
import { responsesToChat } from "../translate/responses-to-chat";
import { createChatStreamTranslator } from "../translate/stream-to-chat";

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
    const translated = chatToResponses(body);
    const maxTokens = maxTokensOf(body);
    await call.admit({ model: call.model, maxTokens: maxTokens.value, maxTokensParam: maxTokens.param, bodyBytes: bytes });

    const intended = call.boundOutput(normalizeResponsesRequest(translated.request, deps.normalizeOptions));
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
  const rewriter = createResponsesStreamRewriter({ toolNames });
  const translator = createChatStreamTranslator(ctx);
  const encodeAll = (objs: object[]) => {
    let out = "";
    for (const o of objs) out += encodeData(o);
    return out;
  };

  async function* body(): AsyncGenerator<string> {
    call.streamStarted = true;
    const stall = deps.stalls.track(() => call.stalled());
    let status = 200;
    let errorCode: string | null = null;
    let held = "";
    try {
      for await (const batch of source.read()) {
        if (batch === IDLE) {
          stall.waiting = true;
          stall.chunks++;
          yield SSE_KEEPALIVE;
          stall.waiting = false;
          continue;
        }
        let out = "";
        for (const { ev } of batch) for (const o of rewriter.push(ev)) out += encodeAll(translator.push(o));
        // The batch with the terminal event waits for the ledger commit below, with [DONE].
        if (source.terminal) held += out;
        else if (out) {
          stall.waiting = true;
          stall.chunks++;
          yield out;
          stall.waiting = false;
        }
      }
      let out = held;
      for (const o of rewriter.finish()) out += encodeAll(translator.push(o));
      const failure = source.endFailure;
      // The upstream's own error was already translated into an error frame; a stream that just stopped gets one
      // saying so, with the same code a non-streaming caller would get.
      if (failure && !source.failure) {
        out += encodeAll(translator.fail({ message: failure.message, type: "upstream_error", code: failure.code }));
      }
      out += encodeAll(translator.finish());
      if (failure) {
        errorCode = failure.code;
        status = mapStreamFailure(failure.code, failure.message).status;
      }
      await call.finish(status, errorCode, source.usage);
      // Not billed, not delivered: an error frame instead of the end of the answer.
      if (call.unrecorded) out = encodeAll([{ error: { message: GatewayCall.UNRECORDED.message, type: "service_unavailable", code: GatewayCall.UNRECORDED.code, param: null } }]);
      yield out + SSE_DONE;
    } catch (err) {
      if (call.upstreamAbort.signal.aborted) {
        status = 499;
        errorCode = "client_closed";
        return;
      }
      const e = upstreamStreamError(err);
      status = e.status;
      errorCode = e.code;
      await call.finish(status, errorCode, source.usage);
      yield held + encodeAll(translator.fail({ message: e.message, type: e.type, code: e.code })) + SSE_DONE;
    } finally {
      deps.stalls.untrack(stall);
      // After the terminal event the source has already released the upstream body; aborting then only costs.
      if (!source.terminal) call.upstreamAbort.abort();
      // Unsettled and still "200" here: the server abandoned the body at a yield, because the caller went away
      // mid-stream. It is charged for what was produced until then (estimated when no usage came).
      call.finish(status === 200 && errorCode === null ? 499 : status, errorCode ?? "client_closed", source.usage);
    }
  }

  call.settleIfStreamNeverStarts();
  return new Response(body() as unknown as BodyInit, { status: 200, headers: call.headers(SSE_HEADERS) });
}
