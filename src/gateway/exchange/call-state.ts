/**
 * One gateway call's state: its ids, timing, model, lease and what the upstream answered. Authentication, the
 * settlement, output bounds and error replies are their own modules; this holds what they read.
 */
import { clientRequestIdOf, newRequestId } from "../../http/request-id";
import type { CallDeps } from "../gateway-deps";
import type { Lease } from "../limits/admission";
import type { UsageMeter } from "../pipeline/pipeline-call";
import { CallSettlement, type Endpoint } from "./settlement";

export class GatewayCall {
  /** Gantry's own id of this call: the ledger row's unique id, and the `x-request-id` of the reply and the log line. */
  readonly requestId = newRequestId();
  /** The caller's X-Request-Id when well-formed: logged and echoed as `x-client-request-id`, never the ledger's id. */
  readonly clientRequestId: string | null;
  readonly startedAt = performance.now();
  readonly startedAtMs: number;
  lease: Lease | null = null;
  /** The caller's key once authenticated: a refused call's log line names it too. */
  keyId: string | null = null;
  /** The model named so far: the caller's name, and once admitted the upstream's (`aliasTo`). */
  model = "";
  /** The caller's name when an alias replaced it in `model`. */
  private callerModel: string | null = null;
  upstreamTtfbMs: number | null = null;
  /** The upstream account that served the call: the ledger and the log line name it (never its key). */
  upstreamAccount: string | null = null;
  /** Set once the upstream answered: what a cut call is charged is estimated from it. */
  meter: UsageMeter | null = null;
  /** The call's one settlement, and the PipelineCall its stream is driven with. */
  readonly settlement: CallSettlement;

  constructor(
    deps: CallDeps,
    readonly request: Request,
    readonly endpoint: Endpoint,
    /** A second header naming the request id on every reply, when the caller's dialect expects one. */
    private readonly requestIdHeader?: string,
  ) {
    this.clientRequestId = clientRequestIdOf(request);
    this.startedAtMs = deps.now();
    this.settlement = new CallSettlement(deps, this);
  }

  /** The model name the caller sent, whatever the upstream gets. */
  get requestedModel(): string {
    return this.callerModel ?? this.model;
  }

  /** From now on the call is for the upstream's model: what it is priced, logged and recorded as. */
  aliasTo(upstreamModel: string): void {
    if (upstreamModel === this.model) return;
    this.callerModel ??= this.model;
    this.model = upstreamModel;
  }

  /** Headers every reply of this call carries. */
  headers(extra?: Record<string, string>): Record<string, string> {
    const client = this.clientRequestId === null ? undefined : { "x-client-request-id": this.clientRequestId };
    const id = this.requestIdHeader === undefined ? undefined : { [this.requestIdHeader]: this.requestId };
    return { "x-request-id": this.requestId, ...id, ...client, ...this.lease?.headers, ...extra };
  }
}
