/**
 * Reads an upstream SSE body as Responses events, and says when the upstream has been silent for a
 * keep-alive interval (the caller then writes a comment so proxies and clients keep the stream open).
 * It notes what the gateway must know whatever the route: the terminal event, its usage, a failure.
 */
import { createSseDecoder, parseStreamEvent, type SseEvent } from "./sse/decode";
import { streamErrorOf, usageOf } from "./collect";
import { STREAM_ENDED_EARLY } from "./failure";
import { TERMINAL_EVENT_TYPES, type ResponseObject, type ResponsesStreamEvent, type ResponsesUsage } from "./responses-types";

export const IDLE = Symbol("idle");

export interface UpstreamEvent {
  sse: SseEvent;
  ev: ResponsesStreamEvent;
}

export class UpstreamEventSource {
  terminal: ResponsesStreamEvent | null = null;
  usage: ResponsesUsage | null = null;
  /** The first in-band failure (`error` event or `response.failed`). */
  failure: { code: string; message: string } | null = null;
  /** The latest response snapshot (from created / in_progress / terminal), for building a failure event. */
  snapshot: ResponseObject | null = null;
  lastSequence = -1;

  constructor(
    private readonly body: ReadableStream<Uint8Array>,
    private readonly keepAliveMs: number,
  ) {}

  /** Yields batches of events as they arrive, or IDLE after each silent keep-alive interval. Throws on transport errors and malformed events. */
  async *read(): AsyncGenerator<UpstreamEvent[] | typeof IDLE> {
    const reader = this.body.getReader();
    const decoder = createSseDecoder();
    let pending: ReturnType<typeof reader.read> | null = null;
    try {
      for (;;) {
        pending ??= reader.read();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const tick = new Promise<typeof IDLE>((resolve) => (timer = setTimeout(() => resolve(IDLE), this.keepAliveMs)));
        let result: Awaited<typeof pending> | typeof IDLE;
        try {
          result = await Promise.race([pending, tick]);
        } finally {
          // Also when the read fails (the caller went away, the upstream broke): an armed timer would keep this
          // whole frame (reader, decoder, body) alive for a keep-alive interval after the request ended.
          clearTimeout(timer);
        }
        if (result === IDLE) {
          yield IDLE;
          continue;
        }
        pending = null;
        if (result.done) break;
        const batch = this.accept(decoder.push(result.value));
        if (batch.length) yield batch;
        // The terminal event is the end of the response, whether or not the upstream closes the connection
        // after it (one that keeps it open would otherwise hold the caller until an idle timeout).
        if (this.terminal) return;
      }
      const rest = this.accept(decoder.end());
      if (rest.length) yield rest;
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  private accept(events: SseEvent[]): UpstreamEvent[] {
    const out: UpstreamEvent[] = [];
    for (const sse of events) {
      // Nothing after the terminal event belongs to the response (a trailing [DONE], or noise).
      if (this.terminal) break;
      const ev = parseStreamEvent(sse);
      if (ev === "done") continue;
      this.observe(ev);
      out.push({ sse, ev });
    }
    return out;
  }

  private observe(ev: ResponsesStreamEvent): void {
    if (typeof ev.sequence_number === "number") this.lastSequence = ev.sequence_number;
    if (ev.response && typeof ev.response === "object") this.snapshot = ev.response as ResponseObject;
    if (TERMINAL_EVENT_TYPES.has(ev.type)) {
      this.terminal = ev;
      this.usage = usageOf(ev);
    }
    if (!this.failure && (ev.type === "error" || ev.type === "response.failed")) this.failure = streamErrorOf(ev);
  }

  /**
   * Once the stream has ended, what went wrong, if anything: the upstream's own in-band failure (an `error`
   * event, whether or not a `response.failed` followed it), else the stream ending without a terminal event.
   */
  get endFailure(): { code: string; message: string } | null {
    return this.failure ?? (this.terminal === null ? STREAM_ENDED_EARLY : null);
  }

  get completed(): boolean {
    return this.terminal !== null && this.terminal.type !== "response.failed";
  }
}
