/**
 * The one settlement of a gateway call, whether it ends in success, an error before headers, a failure in-band, or
 * the caller going away: the lease settled in the limiter, the ledger row, the log line and the metrics. It is the
 * `PipelineCall` the pipeline drives, and what withholds an answer whose usage or kept response was not committed.
 */
import { AppError } from "../../errors";
import { releaseConnection } from "../../http/connection-hold";
import { knownError } from "../../state/storage-errors";
import type { CallDeps } from "../gateway-deps";
import type { Lease } from "../limits/admission";
import type { PipelineCall, PipelineEnd, UsageMeter } from "../pipeline/pipeline-call";
import type { ResponsesUsage } from "../wire/responses-types";
import { NO_TOKENS, checkedTokenCounts, type TokenCounts } from "../usage/settle";
import { internalError } from "./error-reply";

/** The ledger's and the metrics' name of a call's route. */
export type Endpoint = "responses" | "chat.completions" | "messages" | "messages.count_tokens" | "models" | "responses.stored";

/** Calls that spend no tokens (Gantry answers them itself): logged and counted in metrics, never a ledger row. */
const UNBILLED: ReadonlySet<Endpoint> = new Set<Endpoint>(["models", "messages.count_tokens"]);

/** What settlement reads of the call's state. */
export interface SettledCall {
  readonly request: Request;
  readonly requestId: string;
  readonly clientRequestId: string | null;
  readonly endpoint: Endpoint;
  readonly startedAt: number;
  readonly startedAtMs: number;
  readonly model: string;
  readonly requestedModel: string;
  readonly lease: Lease | null;
  /** The caller's key once authenticated (before admission: a refused call has no lease). */
  readonly keyId: string | null;
  readonly meter: UsageMeter | null;
  readonly upstreamTtfbMs: number | null;
  /** The upstream account that served the call (null: none was reached). */
  readonly upstreamAccount: string | null;
}

/**
 * Ends that are the caller's doing (it went away, or stopped reading): the upstream produced tokens until then, and
 * they are charged, estimated when the upstream reported none. An upstream failure is not charged that way.
 */
const CUT_BY_CALLER = new Set(["client_closed", "caller_stalled"]);

export class CallSettlement implements PipelineCall {
  private abort: AbortController | null = null;
  private finished = false;
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: CallDeps,
    private readonly call: SettledCall,
  ) {}

  /**
   * Aborts the upstream request: linked to the caller's disconnect, and used on our own failures. Made on first
   * use: a model list answered from the cache never calls the upstream.
   */
  get upstreamAbort(): AbortController {
    if (this.abort) return this.abort;
    const abort = (this.abort = new AbortController());
    // Aborted, the upstream body is closed by us: the call's slot can come back even if its reply is stuck.
    abort.signal.addEventListener("abort", () => this.upstreamBodyClosed(), { once: true });
    const signal = this.call.request.signal;
    if (signal) {
      if (signal.aborted) abort.abort();
      else signal.addEventListener("abort", () => abort.abort(), { once: true });
    }
    return abort;
  }

  /** Set when the pipeline starts: a streamed body the server pulled settles the call itself. */
  private streamStarted = false;

  /**
   * An upstream call is over when its terminal event arrived AND its body is closed (read to its end, cancelled or
   * aborted by us): an upstream may keep its stream open after the terminal event, and until the body is closed it
   * still holds a connection. So while the pipeline reads the body, settlement gives the lease (slot and
   * reservation) back only once the body is closed; the ledger row and everything else are not delayed.
   */
  private bodyOpen = false;
  private releaseLease: (() => void) | null = null;

  started(): void {
    this.streamStarted = true;
    this.bodyOpen = true;
  }

  /** What waits for the upstream body to close (the account's in-flight count); null once it has. */
  private closeHooks: Array<() => void> | null = [];

  /** Runs `fn` once the upstream call is over (its body closed, or the call aborted); at once if it already is. */
  onUpstreamClosed(fn: () => void): void {
    if (this.closeHooks === null) fn();
    else this.closeHooks.push(fn);
  }

  /** The upstream body is closed (by the pipeline, or aborted): a lease held back for it comes back now. */
  private upstreamBodyClosed(): void {
    this.bodyOpen = false;
    const hooks = this.closeHooks;
    this.closeHooks = null;
    if (hooks) for (const fn of hooks) fn();
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
    const signal = this.call.request.signal;
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

  /**
   * The pipeline's end of the call, in one call: the upstream body closed (when it says so), what the end waits for
   * kept, then the call settled; resolves with why the answer is withheld, or null. Without `keep` nothing is
   * awaited before the settlement, so a caller that does not await it (the caller went away) still settles now.
   */
  settle(end: PipelineEnd): Promise<AppError | null> {
    if (end.upstreamClosed) this.upstreamBodyClosed();
    const settled = end.keep
      ? end
          .keep()
          .catch((err) => this.keepFailed(err))
          // Not kept: the ledger records the failure the caller is told instead.
          .then(() => this.finish(this.withheld?.status ?? end.status, this.withheld ? this.withheld.code : end.errorCode, end.usage, end.cut))
      : this.finish(end.status, end.errorCode, end.usage, end.cut);
    return settled.then(() => this.withheld);
  }

  /**
   * Settles exactly once: releases the lease, records usage and the ledger row, logs the request. The promise
   * resolves when the ledger row is committed: routes await it before the caller's last bytes, so a reply the
   * caller received complete is always billed, even if the process dies right after.
   */
  finish(status: number, errorCode: string | null, usage: ResponsesUsage | null = null, cut = false): Promise<void> {
    if (this.finished) return this.settled;
    this.finished = true;
    this.settled = this.record(status, errorCode, usage, cut);
    return this.settled;
  }

  /** The tokens a call is charged: the upstream's checked figures, else an estimate when it was cut (by its caller, or by Gantry). */
  private tokensOf(errorCode: string | null, usage: ResponsesUsage | null, cut: boolean): { tokens: TokenCounts; estimated: boolean } {
    if (usage) {
      const checked = checkedTokenCounts(usage);
      if (checked) return { tokens: checked, estimated: false };
      this.deps.log.warn("upstream usage refused (impossible figures): the request is charged an estimate", {
        requestId: this.call.requestId,
        usage: JSON.stringify(usage).slice(0, 300),
      });
    }
    const meter = this.call.meter;
    if (meter && (usage !== null || cut || (errorCode !== null && CUT_BY_CALLER.has(errorCode)))) {
      return { tokens: meter.estimate(), estimated: true };
    }
    return { tokens: NO_TOKENS, estimated: false };
  }

  private record(status: number, errorCode: string | null, usage: ResponsesUsage | null, cut: boolean): Promise<void> {
    const call = this.call;
    releaseConnection(call.request);
    const { tokens, estimated } = this.tokensOf(errorCode, usage, cut);
    const endedAt = performance.now();
    this.deps.metrics?.gatewayRequest(call.endpoint, status, errorCode, (endedAt - call.startedAt) / 1000, call.upstreamTtfbMs);
    this.deps.log.info("request", {
      requestId: call.requestId,
      clientRequestId: call.clientRequestId ?? undefined,
      route: call.endpoint,
      status,
      keyId: call.lease?.key.key.id ?? call.keyId,
      model: call.model || undefined,
      account: call.upstreamAccount ?? undefined,
      // An alias: the name the caller sent, beside the upstream's that the ledger records.
      requestedModel: call.requestedModel !== call.model ? call.requestedModel : undefined,
      durationMs: Math.round(endedAt - call.startedAt),
      inputTokens: tokens.inputTokens || undefined,
      outputTokens: tokens.outputTokens || undefined,
      estimated: estimated || undefined,
      error: errorCode ?? undefined,
    });
    if (!call.lease || UNBILLED.has(call.endpoint)) {
      call.lease?.settle({ tokens: 0, cost: 0 });
      return Promise.resolve();
    }
    return this.deps.settler
      .settle(this.leaseToSettle(call.lease), {
        requestId: call.requestId,
        endpoint: call.endpoint,
        model: call.model,
        status,
        errorCode,
        tokens,
        startedAt: call.startedAtMs,
        endedAt: call.startedAtMs + (endedAt - call.startedAt),
        upstreamTtfbMs: call.upstreamTtfbMs === null ? null : Math.round(call.upstreamTtfbMs),
        account: call.upstreamAccount,
        estimated,
      })
      .catch((err) => {
        this.withheld ??= unrecordedError();
        this.deps.ledgerHealth?.failed(err);
        this.deps.log.error("ledger write failed", { requestId: call.requestId, error: String(err) });
      });
  }

  /**
   * Why this call's answer is withheld, when what its end waits for could not be committed: the ledger row (the
   * database went away at that moment), or the kept response. The answer is then never delivered as a success: a
   * reply the caller received whole is always billed and, when kept, can be fetched. The caller gets this instead.
   */
  private withheld: AppError | null = null;

  /**
   * The kept response could not be stored: the call ends with a failure naming the store (503 for storage that is
   * unavailable, an internal error otherwise), recorded as such in the ledger.
   */
  private keepFailed(err: unknown): void {
    this.deps.log.error("the response could not be kept", { requestId: this.call.requestId, error: String(err) });
    if (knownError(err) === null) {
      this.withheld = internalError(this.deps, err, this.call.requestId);
      return;
    }
    this.withheld = new AppError("service_unavailable", "The response could not be stored (the server's storage is unavailable), so its answer is withheld; retry shortly.", {
      headers: { "retry-after": "5" },
    });
  }
}

/** The error a caller gets instead of an answer whose usage could not be recorded. */
function unrecordedError(): AppError {
  return new AppError("service_unavailable", "The request's usage could not be recorded, so its answer is withheld; try again.", { headers: { "retry-after": "1" } });
}
