/**
 * POST /v1/responses: admission, normalisation, the forced-streaming upstream call, and the reply —
 * the upstream's events as they arrive (cleaned where needed), or the collected response object.
 */
import { postResponses } from "../upstream/post-responses";
import type { GatewayDeps } from "../gateway-deps";
import { readJsonObject } from "../../http/body";
import { GatewayCall, SSE_HEADERS, checkJsonDepth, optionalBoolean, optionalCount, requireModel } from "../call";
import { collectUpstream } from "../stream/collect-upstream";
import { IDLE, UpstreamEventSource } from "../stream/event-source";
import { outputBoundFor } from "../stream/output-bound";
import { failedResponseEvent, mapStreamFailure } from "../stream/failure";
import { normalizeResponsesRequest } from "../translate/normalize";
import { relayRaw } from "../stream/raw-relay";
import type { JsonObject, ResponsesRequest, ResponsesStreamEvent } from "../responses-types";
import { buildConversation } from "../responses/conversation";
import { ResponseKeeper } from "../responses/response-keeper";
import { SSE_KEEPALIVE, encodeEvent, frameEvent } from "../stream/sse/encode";
import { createResponsesStreamRewriter } from "../stream/stream-rewrite";
import { functionToolNames } from "../stream/tool-markup";

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
    const raw = isRawMode(request.headers);
    const wantsStream = optionalBoolean(body, "stream") === true;
    const maxTokens = optionalCount(body, "max_output_tokens");
    await call.admit({ model: call.model, maxTokens, maxTokensParam: "max_output_tokens", bodyBytes: bytes });

    if (raw) return await relayRaw(deps, call, text);

    const keeper = await keeperFor(deps, call, body);
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
async function keeperFor(deps: GatewayDeps, call: GatewayCall, body: JsonObject): Promise<{ keeper: ResponseKeeper; input: JsonObject[] } | null> {
  const keep = deps.config.storedResponsesDays > 0 && body.store !== false;
  const continues =
    (typeof body.previous_response_id === "string" && body.previous_response_id !== "") ||
    (Array.isArray(body.input) && body.input.some((it: JsonObject) => it !== null && typeof it === "object" && it.type === "item_reference"));
  if (!keep && !continues) return null;
  const keyId = call.lease!.key.key.id;
  const conversation = await buildConversation(deps.responses, keyId, body, deps.now());
  return { keeper: new ResponseKeeper(deps, keyId, call.model, conversation, keep), input: conversation.input };
}

/** The request with the whole conversation as its input, and no `previous_response_id` (the upstream refuses it). */
function continued(body: JsonObject, input: JsonObject[]): JsonObject {
  const { previous_response_id: _previous, ...rest } = body;
  return { ...rest, input };
}

function streamToCaller(deps: GatewayDeps, call: GatewayCall, source: UpstreamEventSource, toolNames: Set<string>, keeper: ResponseKeeper | null): Response {
  const rewriter = createResponsesStreamRewriter({ toolNames });
  let lastSequence = -1;
  const encode = (ev: ResponsesStreamEvent, rawData: string | null): string => {
    if (typeof ev.sequence_number === "number") lastSequence = ev.sequence_number;
    // An event the rewriter left alone is forwarded with its original JSON text, no re-serialisation, when that
    // text fits one `data:` line: upstream JSON spread over several data lines (joined with LF by the decoder)
    // would otherwise lose its framing.
    const json = rawData !== null && !rawData.includes("\n") ? rawData : null;
    if (!keeper) return json !== null ? frameEvent(ev.type, json) : encodeEvent(ev);
    // Kept: Gantry's ids, replaced in the event's JSON text before it is framed.
    keeper.see(ev);
    return frameEvent(ev.type, keeper.rewrite(ev, json ?? JSON.stringify(ev)));
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
        for (const { sse, ev } of batch) {
          for (const o of rewriter.push(ev)) out += encode(o, o === ev ? sse.data : null);
        }
        // The batch with the terminal event waits for the ledger commit below.
        if (source.terminal) held += out;
        else if (out) {
          stall.waiting = true;
          stall.chunks++;
          yield out;
          stall.waiting = false;
        }
      }
      let out = held;
      for (const o of rewriter.finish()) out += encode(o, null);
      const failure = source.endFailure;
      if (failure) {
        // No terminal event: the caller still gets one, a response.failed with the next sequence number,
        // carrying the upstream's own error when it sent one.
        if (!source.terminal) out += encode(failedResponseEvent(source.snapshot, lastSequence + 1, failure.code, failure.message, call.startedAtMs), null);
        errorCode = failure.code;
        status = mapStreamFailure(failure.code, failure.message).status;
      }
      // Kept before the caller gets the end of it (a follow-up naming this response finds it), and before the
      // ledger's commit, whose fsync covers both.
      if (keeper && !failure) await keeper.keepStreamed();
      await call.finish(status, errorCode, source.usage);
      // Not billed, not delivered: the caller gets a failure instead of the end of the answer.
      if (call.unrecorded) out = encode(failedResponseEvent(source.snapshot, lastSequence + 1, GatewayCall.UNRECORDED.code, GatewayCall.UNRECORDED.message, call.startedAtMs), null);
      if (out) yield out;
    } catch (err) {
      if (call.upstreamAbort.signal.aborted) {
        // The caller went away: nothing more to say to it.
        status = 499;
        errorCode = "client_closed";
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      errorCode = "upstream_stream_error";
      status = 502;
      await call.finish(status, errorCode, source.usage);
      yield held + encode(failedResponseEvent(source.snapshot, lastSequence + 1, errorCode, `The upstream stream failed: ${message}`, call.startedAtMs), null);
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
