/**
 * Raw passthrough (X-Upstream-Mode: raw): the caller's body goes upstream untouched and the upstream's status,
 * the headers that matter and its body come back untouched, streamed as they arrive. A decoder reads alongside
 * so the usage in the stream is still settled: passthrough never bypasses quota.
 */
import type { GatewayDeps } from "../../gateway-deps";
import type { ExchangeCall } from "../../exchange/dialect";
import { tokensOfBytes } from "../../wire/token-counts";
import { pipelineResponse } from "../../pipeline/pipeline";
import { RawJsonRelay, RawSseRelay } from "../../pipeline/raw-sink";

/** Upstream reply headers a raw caller gets back (hop-by-hop and the upstream's own quota headers stay behind). */
const PASSED_HEADERS = ["content-type", "retry-after", "openai-processing-ms", "openai-version"];
export async function relayRaw(deps: Pick<GatewayDeps, "upstreamPool" | "config" | "stalls">, call: ExchangeCall, text: string): Promise<Response> {
  const pooled = await deps.upstreamPool.postRaw(text, call.settlement.upstreamAbort.signal, call.request.headers, call.model);
  call.upstreamAccount = pooled.account.name;
  call.settlement.onUpstreamClosed(pooled.release);
  const reply = pooled.reply;
  call.upstreamTtfbMs = reply.ttfbMs;
  const upstream = reply.response;
  const headers = call.headers();
  for (const name of PASSED_HEADERS) {
    const v = upstream.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  const upstreamId = upstream.headers.get("x-request-id");
  if (upstreamId) headers["x-upstream-request-id"] = upstreamId;
  const status = upstream.status;
  const inputTokens = tokensOfBytes(Buffer.byteLength(text));

  if (!upstream.body) {
    call.meter = { estimate: () => ({ inputTokens, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 }) };
    // No body: the upstream call is over, and settled here (no pipeline runs).
    void call.settlement.settle({ status, errorCode: status >= 400 ? "upstream_status" : null, usage: null, upstreamClosed: true });
    return new Response(null, { status, headers });
  }
  const isJson = (upstream.headers.get("content-type") ?? "").includes("json");
  const relay = isJson ? new RawJsonRelay(upstream.body, status, inputTokens) : new RawSseRelay(upstream.body, status, inputTokens, deps.config.maxUpstreamEventBytes);
  call.meter = relay;
  return pipelineResponse(call.settlement, relay, relay, deps.stalls, status, headers);
}
