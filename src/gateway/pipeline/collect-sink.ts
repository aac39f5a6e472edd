/**
 * For callers that asked for no stream: the upstream's events (markup cleaned) folded into the final response
 * object, which the route answers with once the pipeline has settled the call. A failure becomes the error the
 * caller gets instead, with whatever usage was known settled.
 */
import type { AppError } from "../../errors";
import type { ResponseObject } from "../wire/responses-types";
import { createResponseCollector } from "../wire/collect";
import { mapStreamFailure, upstreamStreamError } from "../wire/failure";
import type { FailureOutcome, PipelineSink } from "./pipeline";
import type { UpstreamEvent } from "../wire/stream-event";
import { createResponsesStreamRewriter } from "../wire/stream-rewrite";

export class CollectSink implements PipelineSink<UpstreamEvent[]> {
  readonly keepAlive = null;
  private readonly rewriter;
  private readonly collector = createResponseCollector();
  /** The finished response, once the stream ended well. */
  response: ResponseObject | null = null;
  /** What the caller is told instead: the stream's failure (one that keeping the response met is the call's). */
  error: unknown = null;

  constructor(
    toolNames: ReadonlySet<string>,
    /** What to do with a finished response before the call is settled (keeping it, with Gantry's ids). */
    private readonly keep?: (response: ResponseObject) => Promise<ResponseObject>,
  ) {
    this.rewriter = createResponsesStreamRewriter({ toolNames });
  }

  push(batch: UpstreamEvent[]): string {
    // The collector reads every delta: each event is parsed.
    for (const e of batch) for (const o of this.rewriter.push(e.ev, e.data)) this.collector.push(o);
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
    const result = this.collector.result();
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
