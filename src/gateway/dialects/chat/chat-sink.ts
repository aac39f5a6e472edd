/**
 * The chat SSE a `/v1/chat/completions` stream caller gets: the upstream's events, tool markup cleaned, translated
 * into `chat.completion.chunk` frames, ending with `[DONE]` (after an error frame when the stream failed).
 */
import type { ResponsesStreamEvent } from "../../wire/responses-types";
import { createChatStreamTranslator, type ChatStreamTranslatorOptions } from "../../translate/stream-to-chat";
import { mapStreamFailure, upstreamStreamError } from "../../wire/failure";
import type { UpstreamEventSource } from "../../pipeline/event-source";
import type { FailureOutcome, PipelineSink } from "../../pipeline/pipeline";
import { SSE_DONE, SSE_KEEPALIVE, encodeData, encodeDataAll } from "../../wire/sse-encode";
import { readTextDelta } from "../../wire/delta-text";
import { OPENING_TYPES, TEXT_DELTA, isUnread, type UpstreamEvent } from "../../wire/stream-event";
import { createResponsesStreamRewriter } from "../../wire/stream-rewrite";

export class ChatSink implements PipelineSink<UpstreamEvent[]> {
  readonly keepAlive = SSE_KEEPALIVE;
  private readonly rewriter;
  private readonly translator;

  constructor(
    private readonly source: UpstreamEventSource,
    toolNames: ReadonlySet<string>,
    options: ChatStreamTranslatorOptions,
  ) {
    this.rewriter = createResponsesStreamRewriter({ toolNames });
    this.translator = createChatStreamTranslator(options);
  }

  push(batch: UpstreamEvent[]): string {
    let out = "";
    for (const e of batch) {
      if (isUnread(e) && this.rewriter.skips(e)) {
        // Left alone by the rewriter: an opening event is translated from its type, a text delta from the fields
        // read off its text when they are plain, anything else from its parsed fields.
        if (e.type === TEXT_DELTA) {
          const fields = readTextDelta(e.data);
          if (fields !== null) {
            out += this.translator.pushTextDelta(fields);
            continue;
          }
        }
        out += (OPENING_TYPES.has(e.type) ? this.translator.pushOpening(e.type) : null) ?? this.translate(e.ev);
      } else for (const o of this.rewriter.push(e.ev, e.data)) out += this.translate(o);
    }
    return out;
  }

  end(failure: { code: string; message: string } | null): { out: string; status: number } {
    let out = "";
    for (const o of this.rewriter.finish()) out += this.translate(o);
    // The upstream's own error was already translated into an error frame; a stream that just stopped gets one
    // saying so, with the same code a non-streaming caller would get.
    if (failure && !this.source.failure) out += encodeDataAll(this.translator.fail({ message: failure.message, type: "upstream_error", code: failure.code }));
    out += encodeDataAll(this.translator.finish()) + SSE_DONE;
    return { out, status: failure ? mapStreamFailure(failure.code, failure.message).status : 200 };
  }

  withheld(reason: { code: string; message: string }): string {
    // Not billed, not delivered: an error frame instead of the end of the answer.
    const { code, message } = reason;
    return encodeData({ error: { message, type: code, code, param: null } }) + SSE_DONE;
  }

  broken(err: unknown): FailureOutcome {
    const e = upstreamStreamError(err);
    return { status: e.status, code: e.code, out: encodeDataAll(this.translator.fail({ message: e.message, type: e.type, code: e.code })) + SSE_DONE };
  }

  private translate(ev: ResponsesStreamEvent): string {
    return this.translator.pushEncoded(ev);
  }
}

