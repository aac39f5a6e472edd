/**
 * One gateway request from arrival to settlement: its id, timing, lease and the one settlement it gets,
 * whether it ends in success, an error before headers, a failure in-band, or the caller going away.
 */
import { AppError, errorResponse, isAppError } from "../errors";
import { clientRequestIdOf, newRequestId } from "../http/request-id";
import { bearerToken } from "../http/bearer";
import { clientAddress } from "../http/client-address";
import { holdConnection, releaseConnection } from "../http/connection-hold";
import type { CallDeps } from "./gateway-deps";
import { admit, authenticate, type AdmissionRequest, type Lease } from "./limits/admission";
import type { CachedKey } from "./keys/key-cache";
import { NO_TOKENS, checkedTokenCounts, type TokenCounts } from "./usage/settle";
import type { ResponsesUsage } from "./responses-types";
import { UpstreamRefusal } from "./upstream/upstream-errors";
import { knownError } from "../state/storage-errors";
import { modelNameProblem } from "./limits/model-match";
import type { PipelineCall, UsageMeter } from "./pipeline/pipeline-call";

const MAX_FAILURE_DELAY_MS = 5000;

export type Endpoint = "responses" | "chat.completions" | "models" | "responses.stored";

export type { UsageMeter };

/**
 * Ends that are the caller's doing (it went away, or stopped reading): the upstream produced tokens until then, and
 * they are charged, estimated when the upstream reported none. An upstream failure is not charged that way.
 */
const CUT_BY_CALLER = new Set(["client_closed", "caller_stalled"]);

export class GatewayCall implements PipelineCall {
  /** Gantry's own id of this call: the ledger row's unique id, and the `x-request-id` of the reply and the log line. */
  readonly requestId = newRequestId();
  /** The caller's X-Request-Id when well-formed: logged and echoed as `x-client-request-id`, never the ledger's id. */
  readonly clientRequestId: string | null;
  readonly startedAt = performance.now();
  readonly startedAtMs: number;
  lease: Lease | null = null;
  model = "";
  upstreamTtfbMs: number | null = null;
  private abort: AbortController | null = null;
  private finished = false;
  /** Set by the routes once the upstream answered: what a cut call is charged is estimated from it. */
  meter: UsageMeter | null = null;

  constructor(
    private readonly deps: CallDeps,
    readonly request: Request,
    readonly endpoint: Endpoint,
  ) {
    this.clientRequestId = clientRequestIdOf(request);
    this.startedAtMs = deps.now();
  }

  /**
   * Aborts the upstream request: linked to the caller's disconnect, and used on our own failures. Made on first
   * use: a model list answered from the cache never calls the upstream.
   */
  get upstreamAbort(): AbortController {
    if (this.abort) return this.abort;
    const abort = (this.abort = new AbortController());
    // Aborted, the upstream body is closed by us: the call's slot can come back even if its reply is stuck.
    abort.signal.addEventListener("abort", () => this.upstreamBodyClosed(), { once: true });
    const signal = this.request.signal;
    if (signal) {
      if (signal.aborted) abort.abort();
      else signal.addEventListener("abort", () => abort.abort(), { once: true });
    }
    return abort;
  }

  private key: CachedKey | null = null;

  /**
   * The first check of every gateway request, before its body is read. Unknown keys count against the client
   * address, and each failure past a few waits out the address's lockout (at most 5 s) before its 401: guessing is
   * slowed while a valid key from the same address (a shared NAT) is never refused. Codes stay those of the spec.
   */
  async authenticate(): Promise<CachedKey> {
    try {
      try {
        this.key = authenticate(this.deps.admission, this.request.headers.get("authorization"));
      } catch (err) {
        // Not in the cache: a key created a moment ago elsewhere may not have reached it yet.
        if (!isAppError(err) || err.code !== "invalid_api_key") throw err;
        const found = await this.deps.admission.keys.resolve(bearerToken(this.request.headers.get("authorization"))!);
        if (!found) throw err;
        this.key = found;
      }
      return this.key;
    } catch (err) {
      if (isAppError(err) && err.code === "invalid_api_key") {
        const address = clientAddress(this.request);
        this.deps.keyThrottle.fail(address);
        const waitMs = Math.min(MAX_FAILURE_DELAY_MS, this.deps.keyThrottle.retryAfterMs(address));
        if (waitMs > 0) await Bun.sleep(waitMs);
      }
      throw err;
    }
  }

  async admit(req: AdmissionRequest): Promise<Lease> {
    if (!this.key) throw new Error("admit() before authenticate()");
    // Work whose usage could not be recorded would be withheld anyway: refused before it costs anything.
    this.deps.ledgerHealth?.check();
    this.lease = await admit(this.deps.admission, this.key, req);
    // Admitted: its reply may run for minutes (until settlement, which puts the idle cut back).
    holdConnection(this.request);
    return this.lease;
  }

  /**
   * The key's max-tokens bound, sent upstream as `max_output_tokens` when the request set none (or null): a bound
   * that only refused larger explicit values would let every request that omits the field run unbounded.
   */
  boundOutput<T extends { max_output_tokens?: unknown }>(request: T): T {
    const bound = this.lease?.key.key.maxTokens ?? null;
    if (bound === null || typeof request.max_output_tokens === "number") return request;
    return { ...request, max_output_tokens: bound };
  }

  /**
   * The same bound for a raw passthrough body, which goes upstream as the caller's text: the field is added to that
   * text (after its last member, the rest byte for byte) when the request set none; a caller's `null` is replaced,
   * which takes serialising the body again. A larger value than the bound was refused at admission.
   */
  boundRawText(body: Record<string, unknown>, text: string): string {
    const bound = this.lease?.key.key.maxTokens ?? null;
    if (bound === null || typeof body.max_output_tokens === "number") return text;
    if (Object.hasOwn(body, "max_output_tokens")) return JSON.stringify({ ...body, max_output_tokens: bound });
    // The text is one JSON object with at least `model` in it: its last `}` closes it, after a member.
    const end = text.lastIndexOf("}");
    return `${text.slice(0, end)},"max_output_tokens":${bound}${text.slice(end)}`;
  }

  /** Set by a streamed reply's body when the server first pulls it (the body's own code then settles the call). */
  streamStarted = false;

  /**
   * An upstream call is over when its terminal event arrived AND its body is closed (read to its end, cancelled or
   * aborted by us): an upstream may keep its stream open after the terminal event, and until the body is closed it
   * still holds a connection. So while the pipeline reads the body, settlement gives the lease (slot and
   * reservation) back only once the body is closed; the ledger row and everything else are not delayed.
   */
  private bodyOpen = false;
  private releaseLease: (() => void) | null = null;

  upstreamBodyOpen(): void {
    this.bodyOpen = true;
  }

  upstreamBodyClosed(): void {
    this.bodyOpen = false;
    const release = this.releaseLease;
    this.releaseLease = null;
    release?.();
  }

  /** The lease settlement records, held back while the upstream body is open. */
  private leaseToSettle(lease: Lease): Lease {
    if (!this.bodyOpen) return lease;
    return { ...lease, settle: (used) => void (this.releaseLease = () => lease.settle(used)) };
  }

  /**
   * Called just before a streamed reply is returned. A body the server never pulls (the caller left before the
   * first byte) never runs, so neither does its settlement: then the call is settled here as the caller going
   * away, and the upstream is aborted, so no lease and no upstream request is left behind.
   */
  settleIfStreamNeverStarts(): void {
    const signal = this.request.signal;
    if (!signal) return;
    const abandon = () => {
      if (this.streamStarted || this.finished) return;
      this.upstreamAbort.abort();
      void this.finish(499, "client_closed");
    };
    if (signal.aborted) abandon();
    else signal.addEventListener("abort", abandon, { once: true });
  }

  /**
   * The caller stopped reading (StallWatch): its upstream is aborted and the call settled as cut by the caller,
   * which frees its lease and puts the idle cut back, so the server closes the silent connection.
   */
  stalled(): void {
    this.upstreamAbort.abort();
    void this.finish(499, "caller_stalled");
  }

  /** Headers every reply of this call carries. */
  headers(extra?: Record<string, string>): Record<string, string> {
    const client = this.clientRequestId === null ? undefined : { "x-client-request-id": this.clientRequestId };
    return { "x-request-id": this.requestId, ...client, ...this.lease?.headers, ...extra };
  }

  /**
   * Settles exactly once: releases the lease, records usage and the ledger row, logs the request. The promise
   * resolves when the ledger row is committed: routes await it before the caller's last bytes, so a reply the
   * caller received complete is always billed, even if the process dies right after.
   */
  finish(status: number, errorCode: string | null, usage: ResponsesUsage | null = null): Promise<void> {
    if (this.finished) return this.settled;
    this.finished = true;
    this.settled = this.record(status, errorCode, usage);
    return this.settled;
  }

  private settled: Promise<void> = Promise.resolve();

  /** The tokens a call is charged: the upstream's checked figures, else an estimate when it was cut by its caller. */
  private tokensOf(errorCode: string | null, usage: ResponsesUsage | null): { tokens: TokenCounts; estimated: boolean } {
    if (usage) {
      const checked = checkedTokenCounts(usage);
      if (checked) return { tokens: checked, estimated: false };
      this.deps.log.warn("upstream usage refused (impossible figures): the request is charged an estimate", {
        requestId: this.requestId,
        usage: JSON.stringify(usage).slice(0, 300),
      });
    }
    if (this.meter && (usage !== null || (errorCode !== null && CUT_BY_CALLER.has(errorCode)))) {
      return { tokens: this.meter.estimate(), estimated: true };
    }
    return { tokens: NO_TOKENS, estimated: false };
  }

  private record(status: number, errorCode: string | null, usage: ResponsesUsage | null): Promise<void> {
    releaseConnection(this.request);
    const { tokens, estimated } = this.tokensOf(errorCode, usage);
    const endedAt = performance.now();
    this.deps.metrics?.gatewayRequest(this.endpoint, status, errorCode, (endedAt - this.startedAt) / 1000, this.upstreamTtfbMs);
    this.deps.log.info("request", {
      requestId: this.requestId,
      clientRequestId: this.clientRequestId ?? undefined,
      route: this.endpoint,
      status,
      keyId: this.lease?.key.key.id ?? null,
      model: this.model || undefined,
      durationMs: Math.round(endedAt - this.startedAt),
      inputTokens: tokens.inputTokens || undefined,
      outputTokens: tokens.outputTokens || undefined,
      estimated: estimated || undefined,
      error: errorCode ?? undefined,
    });
    // Listing models spends no tokens: it is logged and counted, not written to the ledger.
    if (!this.lease || this.endpoint === "models") {
      this.lease?.settle({ tokens: 0, cost: 0 });
      return Promise.resolve();
    }
    return this.deps.settler
      .settle(this.leaseToSettle(this.lease), {
        requestId: this.requestId,
        endpoint: this.endpoint,
        model: this.model,
        status,
        errorCode,
        tokens,
        startedAt: this.startedAtMs,
        endedAt: this.startedAtMs + (endedAt - this.startedAt),
        upstreamTtfbMs: this.upstreamTtfbMs === null ? null : Math.round(this.upstreamTtfbMs),
        estimated,
      })
      .catch((err) => {
        this.withheld ??= unrecordedError();
        this.deps.ledgerHealth?.failed(err);
        this.deps.log.error("ledger write failed", { requestId: this.requestId, error: String(err) });
      });
  }

  /**
   * Why this call's answer is withheld, when what its end waits for could not be committed: the ledger row (the
   * database went away at that moment), or the kept response. The answer is then never delivered as a success: a
   * reply the caller received whole is always billed and, when kept, can be fetched. The caller gets this instead.
   */
  withheld: AppError | null = null;

  /**
   * The kept response could not be stored: the call ends with a failure naming the store (503 for storage that is
   * unavailable, an internal error otherwise), recorded as such in the ledger.
   */
  keepFailed(err: unknown): void {
    this.deps.log.error("the response could not be kept", { requestId: this.requestId, error: String(err) });
    if (knownError(err) === null) {
      this.withheld = internalError(this.deps, err, this.requestId);
      return;
    }
    this.withheld = new AppError("service_unavailable", "The response could not be stored (the server's storage is unavailable), so its answer is withheld; retry shortly.", {
      headers: { "retry-after": "5" },
    });
  }

  /** The reply for an error before any byte was sent; settles the call (committed before the reply leaves). */
  async fail(err: unknown, render: (err: AppError, headers: Record<string, string>) => Response = errorResponse): Promise<Response> {
    const appErr = knownError(err) ?? internalError(this.deps, err, this.requestId);
    // A caller that went away is what ended the call (the upstream failing is only the consequence). Nobody reads
    // the reply, but its status is what the HTTP metrics count: 499 there too, as in the ledger.
    if (this.request.signal?.aborted) {
      await this.finish(499, "client_closed");
      return new Response(null, { status: 499, headers: this.headers() });
    }
    if (appErr instanceof UpstreamRefusal) {
      // What the upstream said is for the operator, under this id; the caller gets the mapped error.
      this.deps.log.warn("upstream refused the request", { requestId: this.requestId, upstreamStatus: appErr.upstreamStatus, detail: appErr.detail });
      if (appErr.generic) appErr.message = `${appErr.message} (request ${this.requestId})`;
    }
    await this.finish(appErr.status, appErr.code);
    return render(appErr, this.headers(appErr.headers));
  }
}

/** The error a caller gets instead of an answer whose usage could not be recorded. */
function unrecordedError(): AppError {
  return new AppError("service_unavailable", "The request's usage could not be recorded, so its answer is withheld; try again.", { headers: { "retry-after": "1" } });
}

export function internalError(deps: Pick<CallDeps, "log">, err: unknown, requestId: string): AppError {
  deps.log.error("unexpected error", { requestId, error: err instanceof Error ? err.stack ?? err.message : String(err) });
  return new AppError("internal_error", `Internal error (request ${requestId}).`);
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
} as const;

/** Small shape checks of the fields admission needs, before anything is consumed. */
export function requireModel(body: Record<string, unknown>): string {
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw new AppError("invalid_request", "'model' is required and must be a non-empty string.", { param: "model" });
  }
  // Before the name is matched, logged or quoted in an error: a caller's 15 MB name stays out of both.
  const problem = modelNameProblem(model);
  if (problem !== null) throw new AppError("invalid_request", `'model' ${problem}.`, { param: "model", rawCode: "invalid_model" });
  return model;
}

/**
 * A list field holds at most `max` entries (GANTRY_MAX_INPUT_ITEMS): checked once the body is parsed, before any
 * entry is looked at. Half a million tiny items cost seconds of the one event loop to check, rewrite, id and
 * keep, all before the upstream refused them.
 */
export function checkItemCount(body: Record<string, unknown>, field: string, max: number): void {
  const v = body[field];
  if (Array.isArray(v) && v.length > max) {
    throw new AppError("invalid_request", `'${field}' has ${v.length} entries, above the limit of ${max}.`, { param: field, rawCode: "too_many_items" });
  }
}

export function optionalCount(body: Record<string, unknown>, field: string): number | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new AppError("invalid_request", `'${field}' must be a positive integer.`, { param: field });
  }
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean") throw new AppError("invalid_request", `'${field}' must be a boolean.`, { param: field });
  return v;
}

/** The nesting bound of request bodies lives with the body reader (http/body.ts), which admin routes share. */
export { MAX_JSON_DEPTH, checkJsonDepth } from "../http/body";
