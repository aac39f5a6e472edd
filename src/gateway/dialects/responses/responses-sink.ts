/**
 * The Responses SSE a `/v1/responses` stream caller gets: the upstream's events, tool markup cleaned, Gantry's ids
 * when the response is kept. Deltas that need no change go out as the upstream's own JSON text, unparsed; an event
 * the rewriter left alone is framed from its upstream text; only events built or changed here are serialised.
 */
import { NO_ID, type ResponseKeeper } from "../../responses/response-keeper";
import type { ResponsesStreamEvent } from "../../wire/responses-types";
import { createdResponseEvent, failedResponseEvent, mapStreamFailure } from "../../wire/failure";
import type { UpstreamEventSource } from "../../pipeline/event-source";
import type { FailureOutcome, PipelineSink } from "../../pipeline/pipeline";
import { SSE_KEEPALIVE, encodeEvent, frameEvent } from "../../wire/sse-encode";
import { isUnread, type UpstreamEvent } from "../../wire/stream-event";
import { createResponsesStreamRewriter } from "../../wire/stream-rewrite";
import { sequenceInText } from "../../wire/sequence-text";

export class ResponsesSink implements PipelineSink<UpstreamEvent[]> {
  readonly keepAlive = SSE_KEEPALIVE;
  private readonly rewriter;
  /** The last sequence number the caller was sent: a failure Gantry reports comes next. */
  private lastSequence = -1;
  /**
   * What the caller is sure to get: the last sequence number, and whether any event, of the batches before the one
   * that ends the reply (the pipeline holds that one, and replaces it when the answer is withheld).
   */
  private deliveredSequence = -1;
  private deliveredAny = false;

  constructor(
    /** When the call began: a response this sink makes up (created, failed) is dated by it. */
    private readonly call: { readonly startedAtMs: number },
    private readonly source: UpstreamEventSource,
    toolNames: ReadonlySet<string>,
    private readonly keeper: ResponseKeeper | null,
  ) {
    this.rewriter = createResponsesStreamRewriter({ toolNames });
  }

  push(batch: UpstreamEvent[]): string {
    let out = "";
    for (const e of batch) {
      // A kept response learns ids and items from the events that carry them: from their text when it is plain.
      const found = isUnread(e) && this.keeper ? this.keeper.textIds(e) : NO_ID;
      if (isUnread(e) && found !== null && this.rewriter.skips(e)) {
        // Unparsed, it follows the previous event's number; the first one's is read off its text.
        this.lastSequence = this.lastSequence >= 0 ? this.lastSequence + 1 : sequenceInText(e.data);
        // The type was checked against the payload's own and has no line break; the data is one line.
        out += `event: ${e.type}\ndata: ${this.keeper ? this.keeper.rewriteText(e, found) : e.data}\n\n`;
        continue;
      }
      const ev = e.ev;
      for (const o of this.rewriter.push(ev, e.data)) out += this.encode(o, o === ev ? e.data : null);
    }
    if (!this.source.ended && out !== "") {
      this.deliveredSequence = this.lastSequence;
      this.deliveredAny = true;
    }
    return out;
  }

  end(failure: { code: string; message: string } | null): { out: string; status: number } {
    let out = "";
    for (const o of this.rewriter.finish()) out += this.encode(o, null);
    if (!failure) return { out, status: 200 };
    // No terminal event: the caller still gets one, a response.failed with the next sequence number, carrying the
    // upstream's own error when it sent one.
    if (!this.source.terminal) out += this.failed(failure.code, failure.message);
    return { out, status: mapStreamFailure(failure.code, failure.message).status };
  }

  async beforeSettle(): Promise<void> {
    // Kept before the caller gets the end of it (a follow-up naming this response finds it), and before the
    // ledger's commit, whose fsync covers both.
    if (this.keeper) await this.keeper.keepStreamed();
  }

  withheld(reason: { code: string; message: string }): string {
    // Not billed or not kept, so not delivered: the caller gets a failure instead of the end of the answer,
    // numbered after what it got. If that was nothing (the whole answer came with its end), the failure still
    // follows a response.created, as SDKs expect.
    this.lastSequence = this.deliveredSequence;
    const opening = this.deliveredAny ? "" : this.encode(createdResponseEvent(this.source.snapshot, this.call.startedAtMs), null);
    return opening + this.failed(reason.code, reason.message);
  }

  broken(err: unknown): FailureOutcome {
    const message = err instanceof Error ? err.message : String(err);
    const code = "upstream_stream_error";
    return { status: 502, code, out: this.failed(code, `The upstream stream failed: ${message}`) };
  }

  private failed(code: string, message: string): string {
    return this.encode(failedResponseEvent(this.source.snapshot, this.lastSequence + 1, code, message, this.call.startedAtMs), null);
  }

  private encode(ev: ResponsesStreamEvent, data: string | null): string {
    if (typeof ev.sequence_number === "number") this.lastSequence = ev.sequence_number;
    // An event the rewriter left alone is forwarded with its original JSON text when that text fits one `data:`
    // line: upstream JSON spread over several data lines (joined with LF by the decoder) would lose its framing.
    const json = data !== null && !data.includes("\n") ? data : null;
    if (!this.keeper) return json !== null ? frameEvent(ev.type, json) : encodeEvent(ev);
    // Kept: Gantry's ids, replaced in the event's JSON text before it is framed.
    this.keeper.see(ev);
    return frameEvent(ev.type, this.keeper.rewrite(ev, json ?? JSON.stringify(ev)));
  }
}
