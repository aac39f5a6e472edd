/**
 * For callers that asked for no stream: the upstream's events (markup cleaned) folded into the final response
 * object, which the route answers with once the pipeline has settled the call. A failure becomes the error the
 * caller gets instead, with whatever usage was known settled. A collection may end before the upstream's end (Gantry
 * cuts the reply at a stop sequence): the response collected so far is then the reply, and the upstream is cut.
 */
import type { AppError } from "../../errors";
import type { ResponseObject, ResponsesStreamEvent } from "../wire/responses-types";
import { usageOfTokens } from "../wire/token-counts";
import type { UsageMeter } from "./pipeline-call";
import { createResponseCollector } from "../wire/collect";
import { mapStreamFailure, upstreamStreamError } from "../wire/failure";
import type { FailureOutcome, PipelineSink } from "./pipeline";
import type { UpstreamEvent } from "../wire/stream-event";
import { createResponsesStreamRewriter } from "../wire/stream-rewrite";

/** Where a collection may end before the upstream's: the event from which the reply is whole, and what the ledger records then. */
export interface CollectCut {
  reached(ev: ResponsesStreamEvent): boolean;
  /** Recorded beside the success status (`stop_sequence`): why the upstream was not read to its end. */
  readonly code: string;
}

export class CollectSink implements PipelineSink<UpstreamEvent[]> {
  readonly keepAlive = null;
  private readonly rewriter;
  private readonly collector = createResponseCollector();
  /** The finished response, once the stream ended well. */
  response: ResponseObject | null = null;
  /** What the caller is told instead: the stream's failure (one that keeping the response met is the call's). */
  error: unknown = null;

  /** Set once the cut was reached: the code the ledger records. */
  private cutCode: string | null = null;
  /** Only with a cut: without one the pipeline never asks. */
  readonly finishedEarly?: () => string | null;

  constructor(
    toolNames: ReadonlySet<string>,
    /** What to do with a finished response before the call is settled (keeping it, with Gantry's ids). */
    private readonly keep?: (response: ResponseObject) => Promise<ResponseObject>,
    private readonly cut?: CollectCut,
    /** What a cut reply reports as its usage (the upstream's never came): the estimate the ledger charges too. */
    private readonly meter?: UsageMeter,
  ) {
    this.rewriter = createResponsesStreamRewriter({ toolNames });
    if (cut) this.finishedEarly = () => this.cutCode;
  }

  push(batch: UpstreamEvent[]): string {
    const cut = this.cut;
    // The collector reads every delta: each event is parsed.
    if (!cut) for (const e of batch) for (const o of this.rewriter.push(e.ev, e.data)) this.collector.push(o);
    else
      for (const e of batch)
        for (const o of this.rewriter.push(e.ev, e.data)) {
          this.collector.push(o);
          // The rest of the batch is still collected: a terminal event in it keeps the upstream's own usage.
          if (this.cutCode === null && cut.reached(o)) this.cutCode = cut.code;
        }
    return "";
  }

  end(failure: { code: string; message: string } | null): { out: string; status: number; code?: string } {
    for (const o of this.rewriter.finish()) this.collector.push(o);
    if (!failure) return { out: "", status: 200 };
    const err = mapStreamFailure(failure.code, failure.message);
    this.error = err;
    return { out: "", status: err.status, code: err.code };
  }

  async beforeSettle(): Promise<void> {
    let result = this.collector.result();
    // Cut before the upstream's end: whole as far as the caller is concerned, with what was produced as its usage.
    if (this.cutCode !== null && this.collector.terminal === null) {
      result = { ...result, status: "completed", usage: this.meter ? usageOfTokens(this.meter.estimate()) : null };
    }
    this.response = this.keep ? await this.keep(result) : result;
  }

  withheld(reason: AppError): null {
    // The caller is told why instead of getting the response (a failure of the stream itself comes first).
    this.error ??= reason;
    return null;
  }

  broken(err: unknown): FailureOutcome {
    const e = upstreamStreamError(err);
    this.error = e;
    return { status: e.status, code: e.code, out: "" };
  }
}
