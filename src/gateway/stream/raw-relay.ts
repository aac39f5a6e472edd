/**
 * Raw passthrough (X-Upstream-Mode: raw): the caller's body goes upstream untouched and the upstream's status,
 * the headers that matter and its body come back untouched, streamed as they arrive. A decoder reads alongside
 * so the usage in the stream is still settled: passthrough never bypasses quota.
 */
import type { GatewayDeps } from "../gateway-deps";
import type { GatewayCall } from "../call";
import { usageOf } from "./upstream-events";
import { createSseDecoder, parseStreamEvent } from "./sse/decode";
import { TERMINAL_EVENT_TYPES, type ResponsesUsage } from "../responses-types";

/** Upstream reply headers a raw caller gets back (hop-by-hop and the upstream's own quota headers stay behind). */
const PASSED_HEADERS = ["content-type", "retry-after", "openai-processing-ms", "openai-version"];
const MAX_JSON_USAGE_SCAN = 1024 * 1024;

export async function relayRaw(deps: Pick<GatewayDeps, "upstream">, call: GatewayCall, text: string): Promise<Response> {
  const reply = await deps.upstream.postResponses(text, call.upstreamAbort.signal, {
    raw: true,
    callerHeaders: call.request.headers,
  });
  call.upstreamTtfbMs = reply.ttfbMs;
  const upstream = reply.response;
  const headers = call.headers();
  for (const name of PASSED_HEADERS) {
    const v = upstream.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  const upstreamId = upstream.headers.get("x-request-id");
  if (upstreamId) headers["x-upstream-request-id"] = upstreamId;
  const isJson = (upstream.headers.get("content-type") ?? "").includes("json");
  const status = upstream.status;

  if (!upstream.body) {
    call.finish(status, status >= 400 ? "upstream_status" : null);
    return new Response(null, { status, headers });
  }

  async function* body(): AsyncGenerator<Uint8Array> {
    call.streamStarted = true;
    const reader = upstream.body!.getReader();
    const decoder = createSseDecoder();
    let usage: ResponsesUsage | null = null;
    let jsonText = "";
    const textDecoder = new TextDecoder();
    let errorCode: string | null = status >= 400 ? "upstream_status" : null;
    let finalStatus = status;
    // The bytes that end the reply (the chunk with the terminal event; a JSON body's last chunk) wait for the
    // ledger commit, so a reply the caller received whole is always billed.
    let heldJson: Uint8Array | null = null;
    let ended = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        if (isJson) {
          if (jsonText.length < MAX_JSON_USAGE_SCAN) jsonText += textDecoder.decode(value, { stream: true });
          if (heldJson) yield heldJson;
          heldJson = value;
          continue;
        }
        let terminal = false;
        for (const sse of decoder.push(value)) {
          // Only terminal events carry usage: skip parsing the rest when the event line names its type.
          if (sse.event !== undefined && !TERMINAL_EVENT_TYPES.has(sse.event)) continue;
          try {
            const ev = parseStreamEvent(sse);
            if (ev !== "done" && TERMINAL_EVENT_TYPES.has(ev.type)) {
              usage = usageOf(ev) ?? usage;
              terminal = true;
            }
          } catch {
            // Raw callers handle the upstream's own behaviour, malformed events included.
          }
        }
        if (terminal) await call.finish(finalStatus, errorCode, usage);
        yield value;
      }
      if (isJson) {
        try {
          const parsed = JSON.parse(jsonText);
          usage = (parsed?.usage as ResponsesUsage) ?? (parsed?.response?.usage as ResponsesUsage) ?? null;
        } catch {
          // Not JSON after all: nothing to settle from.
        }
        await call.finish(finalStatus, errorCode, usage);
        if (heldJson) yield heldJson;
      }
    } catch (err) {
      finalStatus = call.upstreamAbort.signal.aborted ? 499 : 502;
      errorCode = call.upstreamAbort.signal.aborted ? "client_closed" : "upstream_stream_error";
      if (!call.upstreamAbort.signal.aborted) throw err;
    } finally {
      if (!ended) {
        reader.cancel().catch(() => {});
        call.upstreamAbort.abort();
      }
      call.finish(finalStatus, errorCode, usage);
    }
  }

  call.settleIfStreamNeverStarts();
  return new Response(body() as unknown as BodyInit, { status, headers });
}
