/**
 * The Anthropic SSE a `/v1/messages` stream caller gets: the upstream's events, tool markup cleaned (the same
 * rewriter the other dialects use), translated into Messages events; `ping` while the upstream is silent; an in-band
 * `error` event when the stream fails. A stop sequence ends the reply at once: the pipeline then cuts the upstream.
 */
import type { UpstreamEventSource } from "../../pipeline/event-source";
import type { FailureOutcome, PipelineSink } from "../../pipeline/pipeline";
import { createMessagesStreamTranslator, frame, upstreamErrorType, type MessagesStreamOptions } from "../../translate/messages/stream-to-messages";
import { messagesErrorBody, messagesErrorOf } from "../../translate/messages/messages-errors";
import { mapStreamFailure, upstreamStreamError } from "../../wire/failure";
import type { UpstreamEvent } from "../../wire/stream-event";
import { createResponsesStreamRewriter } from "../../wire/stream-rewrite";
import { usageOfTokens } from "../../wire/token-counts";

export const MESSAGES_PING = frame("ping", { type: "ping" });

export class MessagesSink implements PipelineSink<UpstreamEvent[]> {
  readonly keepAlive = MESSAGES_PING;
  private readonly rewriter;
  private readonly translator;
  /** Set once a stop sequence ended the reply before the upstream's end (what the ledger records beside its 200). */
  private stoppedEarly: string | null = null;
  /** Only when the request has stop sequences: without them the pipeline never asks. */
  readonly finishedEarly?: () => string | null;

  constructor(
    private readonly source: UpstreamEventSource,
    toolNames: ReadonlySet<string>,
    options: MessagesStreamOptions,
  ) {
    this.rewriter = createResponsesStreamRewriter({ toolNames });
    this.translator = createMessagesStreamTranslator(options);
    if (options.stopSequences.length > 0) this.finishedEarly = () => this.stoppedEarly;
  }

  push(batch: UpstreamEvent[]): string {
    let out = "";
    // Every event is read: the translation needs its fields (a text delta's included), so nothing goes out unparsed.
    for (const e of batch) for (const o of this.rewriter.push(e.ev, e.data)) out += this.translator.push(o);
    if (this.finishedEarly !== undefined && this.stoppedEarly === null) {
      // A stop sequence in this batch and no terminal event yet: the reply ends now, its usage what was produced.
      const end = this.translator.endAtStop(() => usageOfTokens(this.source.estimate()));
      if (end !== "") {
        out += end;
        this.stoppedEarly = "stop_sequence";
      }
    }
    return out;
  }

  end(failure: { code: string; message: string } | null): { out: string; status: number } {
    let out = "";
    for (const o of this.rewriter.finish()) out += this.translator.push(o);
    // The upstream's own error was already translated; a stream that just stopped gets an error event saying so.
    if (failure && !this.source.failure) out += this.translator.fail(upstreamErrorType(failure.code, failure.message), failure.message);
    out += this.translator.finish();
    return { out, status: failure ? mapStreamFailure(failure.code, failure.message).status : 200 };
  }

  withheld(reason: { code: string; message: string; status: number }): string {
    // Not billed, not delivered: an error event instead of the end of the answer. Made here, not by the translator,
    // which has already seen the end it replaces (and says nothing after an end).
    return frame("error", messagesErrorBody(messagesErrorOf(reason).type, reason.message));
  }

  broken(err: unknown): FailureOutcome {
    const e = upstreamStreamError(err);
    return { status: e.status, code: e.code, out: this.translator.fail(messagesErrorOf(e).type, e.message) };
  }
}
