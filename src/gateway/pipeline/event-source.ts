/**
 * Reads an upstream SSE body as Responses events, and says when the upstream has been silent for a
 * keep-alive interval (the caller then writes a comment so proxies and clients keep the stream open).
 * It notes what the gateway must know whatever the route: the terminal event, its usage, a failure.
 */
import { DEFAULT_MAX_EVENT_BYTES, createSseDecoder, parseStreamEvent, type SseDecoder, type SseEvent } from "../wire/sse-decode";
import { classify, deltaBytesOf, isUnread, parsedEvent, type ErrorEvent, type OtherEvent, type TerminalEvent, type UnreadEvent, type UpstreamEvent } from "../wire/stream-event";
import { STREAM_ENDED_EARLY } from "../wire/failure";
import { IDLE, type PipelineSource } from "./pipeline";
import type { OutputBound } from "../wire/output-bound";
import type { UsageMeter } from "./pipeline-call";
import { tokensOfBytes, type TokenCounts } from "../wire/token-counts";
import type { ResponseObject, ResponsesStreamEvent, ResponsesUsage } from "../wire/responses-types";

export { IDLE } from "./pipeline";

export type { UpstreamEvent } from "../wire/stream-event";

/**
 * How much unread delta text waits to be measured: far more than a short reply's (measured only when an estimate is
 * asked for, so usually never), little enough to hold (a long reply's deltas are measured in rounds of this size).
 */
const UNREAD_DELTA_CHARS = 64 * 1024;

/** The most upstream bytes read into one batch. */
const BATCH_BYTES = 16 * 1024;

/**
 * A stream whose opening was already read (held while the upstream pool waited for the first content): the events
 * the hold decoded and its decoder, when given; then the bytes in `prefix`, as they came; then the rest from the
 * reader.
 */
export interface HeldBody {
  /** The events already decoded, and the decoder that read them (it holds any event begun and not finished). */
  readonly opened?: { readonly events: readonly SseEvent[]; readonly decoder: SseDecoder };
  /** Bytes read and not decoded yet (all of them when there is no `opened`). */
  readonly prefix: readonly Uint8Array[];
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  /** A read already under way when the stream was handed on: its result comes after the prefix. */
  readonly pending?: ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>;
}

export class UpstreamEventSource implements UsageMeter, PipelineSource<UpstreamEvent[]> {
  terminal: ResponsesStreamEvent | null = null;
  usage: ResponsesUsage | null = null;
  /** The first in-band failure (`error` event or `response.failed`). */
  failure: { code: string; message: string } | null = null;
  /** The latest response snapshot (created / in_progress / terminal), for building a failure event: parsed when asked. */
  private snapshotValue: ResponseObject | null = null;
  private snapshotEvent: UnreadEvent | null = null;
  lastSequence = -1;
  /**
   * Every event parsed on arrival, none classified as unread: for a collected reply, whose collector reads every
   * event anyway (classifying them first would only add work).
   */
  readsAll = false;
  /** The largest event (or line) buffered (GANTRY_MAX_UPSTREAM_EVENT_BYTES); a larger one makes read() throw. */
  maxEventBytes = DEFAULT_MAX_EVENT_BYTES;
  /** UTF-8 bytes of the deltas read so far (text, reasoning, tool arguments): the output an estimate counts. */
  private outputBytes = 0;
  /**
   * Unread deltas' texts, measured only if an estimate is asked for (a call cut before its usage came), or once
   * they add up to UNREAD_DELTA_CHARS: each may hold on to the whole chunk it was cut from, so keeping every one
   * until the end would keep a long reply's text in memory (a caller that stops reading held megabytes).
   */
  private unreadDeltas: string[] = [];
  private unreadChars = 0;

  constructor(
    private readonly body: ReadableStream<Uint8Array> | HeldBody,
    private readonly keepAliveMs: number,
    /** Set when Gantry enforces the output bound itself (the upstream refused `max_output_tokens`). */
    private readonly bound: OutputBound | null = null,
    /** The request as sent upstream (its size estimates the input when the upstream reports no usage). */
    private readonly sentJson = "",
  ) {}

  get snapshot(): ResponseObject | null {
    const unread = this.snapshotEvent;
    if (unread) {
      this.snapshotEvent = null;
      try {
        const response = unread.ev.response;
        if (response && typeof response === "object") this.snapshotValue = response as ResponseObject;
      } catch {
        // A snapshot that does not parse: the failure event is built without it.
      }
    }
    return this.snapshotValue;
  }

  get ended(): boolean {
    return this.terminal !== null;
  }

  /** The tokens produced so far, estimated: for a call cut before the upstream reported its usage. */
  estimate(): TokenCounts {
    this.measureUnread();
    return { inputTokens: tokensOfBytes(Buffer.byteLength(this.sentJson)), outputTokens: tokensOfBytes(this.outputBytes), reasoningTokens: 0, cachedTokens: 0 };
  }

  /** Yields batches of events as they arrive, or IDLE after each silent keep-alive interval. Throws on transport errors and malformed events. */
  async *read(): AsyncGenerator<UpstreamEvent[] | typeof IDLE> {
    const body = this.body;
    const held = body instanceof ReadableStream ? null : body;
    const reader = held ? held.reader : (body as ReadableStream<Uint8Array>).getReader();
    let heldAt = held && held.prefix.length > 0 ? 0 : -1;
    let heldRead = held?.pending ?? null;
    const decoder = held?.opened?.decoder ?? createSseDecoder(this.maxEventBytes);
    let pending: ReturnType<typeof reader.read> | null = null;
    try {
      if (held?.opened) {
        // Decoded by the hold already: taken as they are, then the same decoder goes on with what follows.
        const opening = this.accept(held.opened.events);
        if (opening.length) yield opening;
        if (this.terminal) return;
      }
      for (;;) {
        if (pending === null && heldAt >= 0) {
          // Held chunks first: already read, so already settled (no wait, no keep-alive timer).
          pending = Promise.resolve({ done: false as const, value: held!.prefix[heldAt++]! });
          if (heldAt >= held!.prefix.length) heldAt = -1;
        } else if (pending === null && heldRead !== null) {
          pending = heldRead;
          heldRead = null;
        }
        pending ??= reader.read();
        const result = await this.next(pending);
        // The finished wait's resolver: the timer must find nothing to wake, and nothing should retain it.
        this.wake = null;
        if (result === IDLE) {
          yield IDLE;
          continue;
        }
        pending = null;
        if (result.done) break;
        const bytes = result.value;
        // A chunk is read in slices of at most BATCH_BYTES (a fast upstream's can be a few hundred KiB): what a batch
        // becomes (its text, its events, the caller's bytes) waits whole at the caller's socket while it is full.
        for (let at = 0; at < bytes.length; at += BATCH_BYTES) {
          const batch = this.accept(decoder.push(bytes.length <= BATCH_BYTES ? bytes : bytes.subarray(at, at + BATCH_BYTES)));
          if (batch.length) yield batch;
          // The terminal event is the end of the response, whether or not the upstream closes the connection
          // after it (one that keeps it open would otherwise hold the caller until an idle timeout).
          if (this.terminal) return;
        }
      }
      const rest = this.accept(decoder.end());
      if (rest.length) yield rest;
    } finally {
      this.stopKeepAlive();
      reader.cancel().catch(() => {});
    }
  }

  // Keep-alive: ONE timer per stream instead of a setTimeout + Promise.race per read (a timer and three promises
  // for every chunk). `waitStart` is when the current wait began; the timer, when it fires, either wakes the wait with IDLE
  // (silent for a whole interval) or re-arms itself for the time left. It only lives while a wait is in progress
  // (it disarms when it finds none), so a reply the caller stopped pulling holds nothing for longer than one interval.
  private waitStart = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private wake: ((v: typeof IDLE) => void) | null = null;
  private readonly onTimer = (): void => {
    this.timer = null;
    if (!this.wake) return;
    const left = this.keepAliveMs - (performance.now() - this.waitStart);
    // 1 ms of slack: timers are not more precise than that, and an early re-arm for 0 ms would only spin.
    if (left > 1) {
      this.timer = setTimeout(this.onTimer, left);
      return;
    }
    const wake = this.wake;
    this.wake = null;
    wake(IDLE);
  };

  /** The read's result, or IDLE once keepAliveMs pass without it. */
  private next<T>(pending: Promise<T>): T | typeof IDLE | Promise<T | typeof IDLE> {
    // Data already buffered (common while the upstream is sending fast): no promise, no timer.
    if (Bun.peek.status(pending) === "fulfilled") return Bun.peek(pending) as T;
    this.waitStart = performance.now();
    this.timer ??= setTimeout(this.onTimer, this.keepAliveMs);
    return new Promise<T | typeof IDLE>((resolve, reject) => {
      this.wake = resolve;
      pending.then(resolve, reject);
    });
  }

  private stopKeepAlive(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake = null;
  }

  private accept(events: readonly SseEvent[]): UpstreamEvent[] {
    const out: UpstreamEvent[] = [];
    for (const sse of events) {
      // Nothing after the terminal event belongs to the response (a trailing [DONE], or noise).
      if (this.terminal) break;
      if (this.bound || this.readsAll) {
        // The bound counts and cuts every delta, a collector reads every event: each is read whole.
        const ev = parseStreamEvent(sse);
        if (ev === "done") continue;
        for (const passed of this.bound ? this.bound.pass(ev) : [ev]) {
          // An event the bound cut or made has no upstream text of its own.
          const e = parsedEvent(passed, passed === ev ? sse.data : null);
          this.observe(e);
          out.push(e);
        }
        continue;
      }
      const e = classify(sse);
      if (e === "done") continue;
      if (isUnread(e)) {
        // Unparsed: a delta's size is read from its text when needed, an event's number follows the previous one's.
        if (e.kind === "delta") {
          this.unreadDeltas.push(e.data);
          this.unreadChars += e.data.length;
          if (this.unreadChars > UNREAD_DELTA_CHARS) this.measureUnread();
        }
        else if (e.type === "response.created" || e.type === "response.in_progress") this.snapshotEvent = e;
        if (this.lastSequence >= 0) this.lastSequence++;
      } else this.observe(e);
      out.push(e);
    }
    return out;
  }

  private measureUnread(): void {
    for (const data of this.unreadDeltas) this.outputBytes += deltaBytesOf(data);
    this.unreadDeltas = [];
    this.unreadChars = 0;
  }

  private observe(e: TerminalEvent | ErrorEvent | OtherEvent): void {
    const ev = e.ev;
    if (typeof ev.sequence_number === "number") this.lastSequence = ev.sequence_number;
    switch (e.kind) {
      case "terminal":
        this.terminal = ev;
        this.usage = e.usage;
        if (e.response) this.noteSnapshot(e.response);
        if (!this.failure && e.error) this.failure = e.error;
        return;
      case "error":
        this.failure ??= e.error;
        return;
      case "other":
        // Events the output bound made or cut, and events that could not stay unread, read as they are.
        if (typeof ev.delta === "string") this.outputBytes += Buffer.byteLength(ev.delta);
        if (ev.response && typeof ev.response === "object") this.noteSnapshot(ev.response as ResponseObject);
    }
  }

  private noteSnapshot(response: ResponseObject): void {
    this.snapshotValue = response;
    this.snapshotEvent = null;
  }

  /**
   * Once the stream has ended, what went wrong, if anything: the upstream's own in-band failure (an `error`
   * event, whether or not a `response.failed` followed it), else the stream ending without a terminal event.
   */
  get endFailure(): { code: string; message: string } | null {
    return this.failure ?? (this.terminal === null ? STREAM_ENDED_EARLY : null);
  }
}
