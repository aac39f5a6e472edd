/**
 * An output bound Gantry enforces itself, for an upstream that refused `max_output_tokens` (it was dropped as an
 * unsupported parameter): without this, dropping the field would lift the key's max-tokens bound.
 *
 * The visible output (text, refusal, reasoning and tool-argument deltas) is counted at about four UTF-8 bytes a
 * token, the same estimate the quota's reservation uses. The delta that would cross the bound is cut at a code
 * point, what is open is closed (text and part `.done` events, then `output_item.done` with status `incomplete`),
 * and the stream ends with `response.incomplete`, reason `max_output_tokens`, as OpenAI ends a response that
 * reached its bound. Its usage is the estimate (input from the request's size, output from what was counted);
 * the upstream is not read any further, so it reports none. Hidden reasoning cannot be counted while it runs: an
 * upstream that thinks long before it writes is bounded by what it writes.
 */
import { createResponseCollector } from "./collect";
import { DELTA_TYPES } from "./stream-event";
import { BYTES_PER_TOKEN, tokensOfBytes } from "./token-counts";
import type { JsonObject, OutputItem, ResponsesRequest, ResponsesStreamEvent, ResponsesUsage } from "./responses-types";
/**
 * What the upstream was sent: the parameters left out and the JSON itself. Declared here (the upstream's
 * `PostedRequest` has both) so the wire code imports nothing of upstream/, which builds on it.
 */
export interface SentRequest {
  dropped: readonly string[];
  sentJson: string;
}


const utf8 = new TextEncoder();

/** The longest prefix of `text` that fits in `bytes` UTF-8 bytes, cut between code points. */
export function utf8Prefix(text: string, bytes: number): string {
  if (bytes <= 0) return "";
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const size = utf8.encode(ch).length;
    if (used + size > bytes) break;
    used += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/**
 * The bound to enforce for a posted request: its `max_output_tokens` when the upstream did not get it (the field
 * was dropped as unsupported), else null (the upstream enforces its own).
 */
export function outputBoundFor(intended: ResponsesRequest, posted: SentRequest): OutputBound | null {
  const bound = intended.max_output_tokens;
  if (typeof bound !== "number" || !posted.dropped.includes("max_output_tokens")) return null;
  return new OutputBound(bound, tokensOfBytes(Buffer.byteLength(posted.sentJson)));
}

export class OutputBound {
  private readonly budget: number;
  private used = 0;
  private lastSequence = -1;
  private readonly collector = createResponseCollector();
  /** Output indexes of items added and not yet done, with the item's id. */
  private readonly openItems = new Map<number, string | undefined>();
  /** Parts added and not yet done, as `kind:outputIndex:partIndex`. */
  private readonly openParts = new Set<string>();
  /** Function calls whose arguments streamed without their `.done`. */
  private readonly openArguments = new Set<number>();
  /** Set once the bound was reached: the events after it are not the caller's. */
  reached = false;

  constructor(
    readonly maxTokens: number,
    private readonly inputTokens: number,
  ) {
    this.budget = maxTokens * BYTES_PER_TOKEN;
  }

  /**
   * The events to pass on for one upstream event: the event itself (the same object when untouched), or, when
   * it crosses the bound, what of it fits followed by the events that end the response.
   */
  pass(ev: ResponsesStreamEvent): ResponsesStreamEvent[] {
    if (this.reached) return [];
    if (DELTA_TYPES.has(ev.type) && typeof ev.delta === "string") {
      const size = Buffer.byteLength(ev.delta);
      if (this.used + size > this.budget) {
        const fits = utf8Prefix(ev.delta, this.budget - this.used);
        if (fits === "") return this.end();
        this.used += Buffer.byteLength(fits);
        const cut = { ...ev, delta: fits };
        this.track(cut);
        return [cut, ...this.end()];
      }
      this.used += size;
    }
    this.track(ev);
    return [ev];
  }

  /** Notes a passed event: what it adds to the response, what it opens or closes, its sequence number. */
  private track(ev: ResponsesStreamEvent): void {
    if (typeof ev.sequence_number === "number") this.lastSequence = ev.sequence_number;
    this.collector.push(ev);
    const index = typeof ev.output_index === "number" ? ev.output_index : null;
    if (index === null) return;
    switch (ev.type) {
      case "response.output_item.added":
        this.openItems.set(index, typeof ev.item?.id === "string" ? ev.item.id : undefined);
        return;
      case "response.output_item.done":
        this.openItems.delete(index);
        this.openArguments.delete(index);
        return;
      case "response.content_part.added":
        this.openParts.add(`content:${index}:${ev.content_index ?? 0}`);
        return;
      case "response.content_part.done":
        this.openParts.delete(`content:${index}:${ev.content_index ?? 0}`);
        return;
      case "response.reasoning_summary_part.added":
        this.openParts.add(`summary:${index}:${ev.summary_index ?? 0}`);
        return;
      case "response.reasoning_summary_part.done":
        this.openParts.delete(`summary:${index}:${ev.summary_index ?? 0}`);
        return;
      case "response.function_call_arguments.delta":
        this.openArguments.add(index);
        return;
      case "response.function_call_arguments.done":
        this.openArguments.delete(index);
        return;
    }
  }

  /** What closes every open part and item, then `response.incomplete`. */
  private end(): ResponsesStreamEvent[] {
    this.reached = true;
    const out: ResponsesStreamEvent[] = [];
    const sequenced = this.lastSequence >= 0;
    const emit = (ev: JsonObject) => out.push(sequenced ? { ...ev, sequence_number: ++this.lastSequence } as ResponsesStreamEvent : (ev as ResponsesStreamEvent));
    for (const index of [...this.openItems.keys()].sort((a, b) => a - b)) {
      const item = this.collector.item(index);
      if (!item) continue;
      const itemId = this.openItems.get(index);
      const at = { item_id: itemId, output_index: index };
      for (const [kind, parts] of [["content", item.content], ["summary", item.summary]] as const) {
        if (!Array.isArray(parts)) continue;
        parts.forEach((part: JsonObject, i: number) => {
          if (!this.openParts.has(`${kind}:${index}:${i}`)) return;
          for (const ev of partDoneEvents(kind, item, part, { ...at, [kind === "content" ? "content_index" : "summary_index"]: i })) emit(ev);
        });
      }
      if (this.openArguments.has(index) && item.type === "function_call") {
        emit({ type: "response.function_call_arguments.done", ...at, arguments: item.arguments ?? "" });
      }
      emit({ type: "response.output_item.done", output_index: index, item: { ...item, status: "incomplete" } });
    }
    const { output_text: _text, ...response } = this.collector.result();
    emit({
      type: "response.incomplete",
      response: { ...response, status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: this.usage() },
    });
    return out;
  }

  /** The estimate the response is settled with. */
  usage(): ResponsesUsage {
    const output = tokensOfBytes(this.used);
    return {
      input_tokens: this.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: this.inputTokens + output,
    };
  }
}

/** The `.done` events of a part left open: its text's, then the part's. */
function partDoneEvents(kind: "content" | "summary", item: OutputItem, part: JsonObject, at: JsonObject): JsonObject[] {
  if (kind === "summary") {
    return [
      { type: "response.reasoning_summary_text.done", ...at, text: part.text ?? "" },
      { type: "response.reasoning_summary_part.done", ...at, part },
    ];
  }
  const text =
    part.type === "refusal"
      ? { type: "response.refusal.done", ...at, refusal: part.refusal ?? "" }
      : item.type === "reasoning"
        ? { type: "response.reasoning_text.done", ...at, text: part.text ?? "" }
        : { type: "response.output_text.done", ...at, text: part.text ?? "", logprobs: [] };
  return [text, { type: "response.content_part.done", ...at, part }];
}
