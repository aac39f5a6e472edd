/**
 * Raw passthrough (X-Upstream-Mode: raw): the caller's body goes upstream untouched and the upstream's status,
 * the headers that matter and its body come back untouched, streamed as they arrive. A decoder reads alongside
 * so the usage in the stream is still settled: passthrough never bypasses quota.
 */
import type { GatewayDeps } from "../gateway-deps";
import type { GatewayCall } from "../call";
import { usageOf } from "./upstream-events";
import { tokensOfBytes } from "../limits/quota";
import { createSseDecoder, parseStreamEvent } from "./sse/decode";
import { TERMINAL_EVENT_TYPES, type ResponsesUsage } from "../responses-types";

/** Upstream reply headers a raw caller gets back (hop-by-hop and the upstream's own quota headers stay behind). */
const PASSED_HEADERS = ["content-type", "retry-after", "openai-processing-ms", "openai-version"];
/** A JSON reply up to this size is parsed whole for its usage; past it, only its tail is kept and read. */
const MAX_JSON_USAGE_SCAN = 1024 * 1024;
/** What is kept of a larger JSON reply: its end, where a response object's `usage` is. */
const JSON_TAIL_BYTES = 256 * 1024;

/**
 * What a raw call cut by its caller is charged, estimated without parsing the stream: the request's size for input
 * (about four bytes a token) and one token a delta event (upstreams stream about a token a delta).
 */
class RawMeter {
  deltas = 0;
  constructor(private readonly requestText: string) {}
  estimate() {
    return { inputTokens: tokensOfBytes(Buffer.byteLength(this.requestText)), outputTokens: this.deltas, reasoningTokens: 0, cachedTokens: 0 };
  }
}

/** The text's last `"usage": {…}` object, found from its end (strings skipped), or null. */
export function lastUsageObject(text: string): ResponsesUsage | null {
  for (let at = text.lastIndexOf('"usage"'); at >= 0; at = text.lastIndexOf('"usage"', at - 1)) {
    const open = text.indexOf("{", at);
    const colon = text.indexOf(":", at + 7);
    if (open < 0 || colon < 0 || colon > open || text.slice(colon + 1, open).trim() !== "") continue;
    const end = matchingBrace(text, open);
    if (end < 0) continue;
    try {
      const usage = JSON.parse(text.slice(open, end + 1));
      if (usage && typeof usage === "object" && !Array.isArray(usage)) return usage as ResponsesUsage;
    } catch {
      // Not this one.
    }
  }
  return null;
}

/** The index of the `}` closing the object opened at `open`, skipping strings; -1 when it does not close. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

export async function relayRaw(deps: Pick<GatewayDeps, "upstream" | "config" | "stalls">, call: GatewayCall, text: string): Promise<Response> {
  const reply = await deps.upstream.postResponses(text, call.upstreamAbort.signal, {
    raw: true,
    callerHeaders: call.request.headers,
  });
  call.upstreamTtfbMs = reply.ttfbMs;
  const meter = new RawMeter(text);
  call.meter = meter;
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
    const stall = deps.stalls.track(() => call.stalled());
    const reader = upstream.body!.getReader();
    const decoder = createSseDecoder(deps.config.maxUpstreamEventBytes);
    let usage: ResponsesUsage | null = null;
    let jsonText = "";
    // Past MAX_JSON_USAGE_SCAN: the reply's last pieces, at most about JSON_TAIL_BYTES, for its trailing usage.
    let tail: string[] = [];
    let tailLength = 0;
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
          const piece = textDecoder.decode(value, { stream: true });
          if (tail.length === 0 && jsonText.length + piece.length <= MAX_JSON_USAGE_SCAN) jsonText += piece;
          else {
            if (tail.length === 0) tail.push(jsonText);
            tail.push(piece);
            tailLength += piece.length;
            while (tail.length > 1 && tailLength - tail[0]!.length >= JSON_TAIL_BYTES) tailLength -= tail.shift()!.length;
          }
          if (heldJson) {
            stall.waiting = true;
            stall.chunks++;
            yield heldJson;
            stall.waiting = false;
          }
          heldJson = value;
          continue;
        }
        let terminal = false;
        for (const sse of decoder.push(value)) {
          // Only terminal events carry usage: skip parsing the rest when the event line names its type.
          if (sse.event !== undefined && !TERMINAL_EVENT_TYPES.has(sse.event)) {
            if (sse.event.endsWith(".delta")) meter.deltas++;
            continue;
          }
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
        stall.waiting = true;
        stall.chunks++;
        yield value;
        stall.waiting = false;
      }
      if (isJson) {
        if (tail.length > 0) usage = lastUsageObject(tail.join(""));
        else {
          try {
            const parsed = JSON.parse(jsonText);
            usage = (parsed?.usage as ResponsesUsage) ?? (parsed?.response?.usage as ResponsesUsage) ?? null;
          } catch {
            // Not JSON after all: nothing to settle from.
          }
        }
        await call.finish(finalStatus, errorCode, usage);
        if (heldJson) yield heldJson;
      }
    } catch (err) {
      finalStatus = call.upstreamAbort.signal.aborted ? 499 : 502;
      errorCode = call.upstreamAbort.signal.aborted ? "client_closed" : "upstream_stream_error";
      if (!call.upstreamAbort.signal.aborted) throw err;
    } finally {
      deps.stalls.untrack(stall);
      if (!ended) {
        reader.cancel().catch(() => {});
        call.upstreamAbort.abort();
        // Abandoned at a yield (the caller went away): charged for what was produced until then.
        if (errorCode === null || finalStatus === status) {
          finalStatus = 499;
          errorCode = "client_closed";
        }
      }
      call.finish(finalStatus, errorCode, usage);
    }
  }

  call.settleIfStreamNeverStarts();
  return new Response(body() as unknown as BodyInit, { status, headers });
}
