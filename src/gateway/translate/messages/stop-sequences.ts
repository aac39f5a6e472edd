/**
 * Stop sequences, honoured by Gantry (the upstream has none): text is let through as it grows, except its last few
 * characters that could still be the start of a stop sequence; when one appears, the text before it is the last the
 * caller gets. A sequence split across deltas is found as surely as one inside a delta.
 */
import type { ResponsesStreamEvent } from "../../wire/responses-types";

export interface StopCut {
  /** Text the caller may have now. */
  text: string;
  /** The sequence that ended the text, once found (nothing after it is passed on). */
  stopped: string | null;
}

export class StopSequenceCutter {
  private held = "";
  private stoppedAt: string | null = null;
  private readonly longest: number;

  constructor(private readonly sequences: readonly string[]) {
    this.longest = sequences.reduce((n, s) => Math.max(n, s.length), 0);
  }

  get stopped(): string | null {
    return this.stoppedAt;
  }

  push(delta: string): StopCut {
    if (this.stoppedAt !== null) return { text: "", stopped: this.stoppedAt };
    if (this.longest === 0) return { text: delta, stopped: null };
    const text = this.held + delta;
    let first = -1;
    let which: string | null = null;
    for (const s of this.sequences) {
      const at = text.indexOf(s);
      if (at >= 0 && (first < 0 || at < first)) {
        first = at;
        which = s;
      }
    }
    if (which !== null) {
      this.held = "";
      this.stoppedAt = which;
      return { text: text.slice(0, first), stopped: which };
    }
    // Keep back the longest tail that is the start of some sequence; the rest cannot be part of one.
    let keep = 0;
    for (let n = Math.min(this.longest - 1, text.length); n > 0; n--) {
      const tail = text.slice(text.length - n);
      if (this.sequences.some((s) => s.startsWith(tail))) {
        keep = n;
        break;
      }
    }
    // Never split a surrogate pair between what is sent and what is held.
    let cut = text.length - keep;
    if (cut > 0 && cut < text.length && isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
    this.held = text.slice(cut);
    return { text: text.slice(0, cut), stopped: null };
  }

  /** The text's end: what was held back is released (no sequence can complete any more). */
  flush(): string {
    const rest = this.stoppedAt === null ? this.held : "";
    this.held = "";
    return rest;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** A whole text cut at its first stop sequence. */
export function cutAtStopSequence(text: string, sequences: readonly string[]): StopCut {
  const cutter = new StopSequenceCutter(sequences);
  const head = cutter.push(text);
  return head.stopped !== null ? head : { text: head.text + cutter.flush(), stopped: null };
}

/**
 * Watches a Responses event stream for the moment a stop sequence appears in the text a collected reply is cut from
 * (each content part apart, as responses-to-messages.ts cuts it): true from that event on. The reply has then all
 * the caller will get, so the upstream need not be read further.
 */
export function createStopWatch(sequences: readonly string[]): (ev: ResponsesStreamEvent) => boolean {
  const cutters = new Map<string, StopSequenceCutter>();
  let stopped = false;
  const found = (cut: StopCut) => (stopped = cut.stopped !== null);
  return (ev) => {
    if (stopped) return true;
    switch (ev.type) {
      case "response.output_text.delta":
      case "response.refusal.delta": {
        if (typeof ev.delta !== "string") return false;
        const key = `${ev.output_index}:${ev.content_index ?? 0}`;
        let cutter = cutters.get(key);
        if (!cutter) cutters.set(key, (cutter = new StopSequenceCutter(sequences)));
        return found(cutter.push(ev.delta));
      }
      // A whole text is what the collected part holds (it wins over the deltas): looked at whole.
      case "response.output_text.done":
        return typeof ev.text === "string" && found(cutAtStopSequence(ev.text, sequences));
      case "response.refusal.done":
        return typeof ev.refusal === "string" && found(cutAtStopSequence(ev.refusal, sequences));
      case "response.output_item.done": {
        const content = ev.item?.type === "message" && Array.isArray(ev.item.content) ? ev.item.content : [];
        for (const part of content) {
          const text = part?.type === "output_text" ? part.text : part?.type === "refusal" ? part.refusal : null;
          if (typeof text === "string" && found(cutAtStopSequence(text, sequences))) return true;
        }
        return false;
      }
      default:
        return false;
    }
  };
}
