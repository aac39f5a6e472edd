/**
 * What a caller style (a dialect: Responses, Chat Completions, …) tells the exchange. The exchange runs the one
 * conversation sequence (exchange.ts); a dialect only says how its caller's body becomes a Responses request,
 * what admission checks, and how the upstream's events go back: streamed through its sink, or collected into
 * its reply. Adding a dialect is adding a folder under dialects/ that implements this; the exchange is unchanged.
 */
import type { PipelineCall, UsageMeter } from "../pipeline/pipeline-call";
import type { PipelineSink } from "../pipeline/pipeline";
import type { CollectCut } from "../pipeline/collect-sink";
import type { UpstreamEvent, UpstreamEventSource } from "../pipeline/event-source";
import type { Lease } from "../limits/admission";
import type { JsonObject, ResponseObject, ResponsesRequest } from "../wire/responses-types";
import type { GatewayDeps } from "../gateway-deps";
import type { Endpoint } from "./settlement";
import type { ErrorRenderer } from "./error-reply";

export type { Endpoint };

/** What a dialect may read and set of the call it serves. */
export interface ExchangeCall {
  readonly request: Request;
  /** The model the upstream gets: the caller's name, or its alias (GANTRY_MODEL_ALIASES) once admitted. */
  readonly model: string;
  /** The model name the caller sent (what an Anthropic reply must name back). */
  readonly requestedModel: string;
  readonly startedAtMs: number;
  /** Set once admitted. */
  readonly lease: Lease | null;
  meter: UsageMeter | null;
  upstreamTtfbMs: number | null;
  /** The upstream account that served the call, once one did. */
  upstreamAccount: string | null;
  /** Headers every reply of this call carries. */
  headers(extra?: Record<string, string>): Record<string, string>;
  /** What the pipeline drives: the call's one settlement; it also says when the upstream call is over. */
  readonly settlement: PipelineCall & { onUpstreamClosed(fn: () => void): void };
}

/** The caller's body as read by the exchange (bounded, one JSON object, depth checked, `model` present). */
export interface CallerBody {
  body: JsonObject;
  text: string;
  bytes: number;
}

/** One request in a dialect: decided from the body before admission, used after it. */
export interface DialectTurn {
  /** The output bound the caller asked for, and the parameter's name that admission quotes when it is too large. */
  readonly maxTokens: number | null;
  readonly maxTokensParam: string;
  /** A stream of the dialect's events, or one collected reply. */
  readonly stream: boolean;
  /**
   * After admission: the Responses request for the upstream (not normalised yet), or the whole reply when the
   * dialect answers by itself (raw passthrough).
   */
  prepare(call: ExchangeCall): Promise<ResponsesRequest | Response>;
  /**
   * Where the request should go: the account that produced the response it continues, and whose encrypted reasoning
   * its input carries (absent: anywhere).
   */
  routing?(): { pinned: string | null; encryptedOwners: ReadonlyMap<string, string | null> } | null;
  /** The upstream answered: the moment the dialect's reply is dated by (a chat completion's `created`). */
  upstreamAnswered?(call: ExchangeCall): void;
  /** The streaming sink: the upstream's events in the dialect's frames. */
  sink(source: UpstreamEventSource, toolNames: ReadonlySet<string>, call: ExchangeCall): PipelineSink<UpstreamEvent[]>;
  /** What is done with a collected response before the call is settled (keeping it), if anything. */
  keep?(): ((response: ResponseObject) => Promise<ResponseObject>) | undefined;
  /** Where a collected reply may end before the upstream's end (a stop sequence), if anywhere. */
  collectCut?(): CollectCut | undefined;
  /** The collected reply's body. */
  reply(response: ResponseObject, call: ExchangeCall): unknown;
}

export interface Dialect {
  readonly endpoint: Endpoint;
  /** The body's list field whose length GANTRY_MAX_INPUT_ITEMS bounds. */
  readonly itemsField: string;
  /** Where the request came from, for normalisation (a translated chat request is already in the upstream's shape). */
  readonly inputFrom?: "chat";
  /** Checks the caller's body and reads what admission needs; throws the AppError the caller gets. */
  read(input: CallerBody, deps: GatewayDeps, request: Request): DialectTurn;
  /** The reply for an error before any byte was sent; absent: the OpenAI error envelope. */
  readonly errorReply?: ErrorRenderer;
  /**
   * The caller's credential, in the form of an Authorization header value (`Bearer <key>`); absent: the request's own
   * Authorization header. Where a caller style puts its key is the dialect's to say (Anthropic's: `x-api-key`).
   */
  readonly credential?: (headers: Headers) => string | null;
  /** A header, beside `x-request-id`, that carries the call's request id on every reply (Anthropic's `request-id`). */
  readonly requestIdHeader?: string;
}
