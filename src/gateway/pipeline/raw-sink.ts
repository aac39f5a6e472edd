/**
 * Raw passthrough through the pipeline: the upstream's bytes go to the caller as they arrive, and only what metering
 * needs is read from them. An event stream is searched (as bytes, undecoded) for the name of a terminal event; only
 * from there is it decoded, and that event's usage read from its text (parsed only when the text does not show it).
 * A JSON reply is read for its `usage` as it passes and its last chunk waits for the ledger's commit.
 */
import type { UsageMeter } from "./pipeline-call";
import type { ResponsesUsage } from "../wire/responses-types";
import { TERMINAL_EVENT_TYPES } from "../wire/responses-types";
import type { TokenCounts } from "../wire/token-counts";
import { JSON_TAIL_BYTES, MAX_JSON_USAGE_SCAN, lastUsageObject, terminalUsageFromText } from "../wire/json-usage";
import type { PipelineSink, PipelineSource } from "./pipeline";
import { SseEventTooLargeError, createSseDecoder, parseStreamEvent, type SseDecoder } from "../wire/sse-decode";
import { opensWithType } from "../wire/stream-event";
import { usageOf } from "../wire/upstream-events";

const TERMINAL_MARKERS = [...TERMINAL_EVENT_TYPES].map((t) => Buffer.from(t));
/** Enough bytes either side of a chunk boundary to hold any name looked for, cut anywhere. */
const SEAM_BYTES = Math.max(...TERMINAL_MARKERS.map((m) => m.length)) + 1;
const DELTA = Buffer.from(".delta");
const DELTA_LF = Buffer.from(".delta\n");
const DELTA_CR = Buffer.from(".delta\r");
const LF = 10;
const CR = 13;

/** What both raw relays share: the upstream body read chunk by chunk, the ledger's status, the estimate. */
abstract class RawRelay implements PipelineSource<Uint8Array>, PipelineSink<Uint8Array>, UsageMeter {
  readonly keepAlive = null;
  readonly okCode: string | null;
  ended = false;
  usage: ResponsesUsage | null = null;
  readonly endFailure = null;
  /** Delta events seen: about a token each, what a call cut by its caller is charged for output. */
  protected deltas = 0;

  constructor(
    private readonly body: ReadableStream<Uint8Array>,
    readonly okStatus: number,
    private readonly inputTokens: number,
  ) {
    this.okCode = okStatus >= 400 ? "upstream_status" : null;
  }

  estimate(): TokenCounts {
    return { inputTokens: this.inputTokens, outputTokens: this.deltas, reasoningTokens: 0, cachedTokens: 0 };
  }

  /** The upstream body was read to its end: nothing to abort. */
  drained = false;
  /** Raw callers get every byte, those after the terminal event too. */
  readonly relaysAfterEnd = true;

  async *read(): AsyncGenerator<Uint8Array> {
    const reader = this.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          this.drained = true;
          return;
        }
        this.see(value);
        yield value;
      }
    } finally {
      if (!this.drained) reader.cancel().catch(() => {});
    }
  }

  protected abstract see(chunk: Uint8Array): void;
  abstract push(chunk: Uint8Array): Uint8Array;
  abstract end(): { out: Uint8Array; status: number };

  withheld(): null {
    return null;
  }

  broken(): null {
    // Raw callers get the upstream's own behaviour: the connection breaks as the upstream's did.
    return null;
  }
}

/** An event stream, forwarded chunk by chunk; the chunk with the terminal event waits for the ledger. */
export class RawSseRelay extends RawRelay {
  /** Bytes since the last event boundary (pieces, and their length), while no terminal event name has been seen. */
  private carry: Uint8Array[] = [];
  private carried = 0;
  /** The stream's last bytes (SEAM_BYTES at most): names cut by a chunk boundary are looked for across it. */
  private tail: Buffer = Buffer.alloc(0);
  /** The stream has CR line breaks somewhere: delta lines ending in CR are counted too. */
  private crSeen = false;
  /** Set once a terminal event's name is seen: from then on the stream is decoded. */
  private decoder: SseDecoder | null = null;

  constructor(
    body: ReadableStream<Uint8Array>,
    okStatus: number,
    inputTokens: number,
    private readonly maxEventBytes: number,
  ) {
    super(body, okStatus, inputTokens);
  }

  protected see(chunk: Uint8Array): void {
    if (this.ended) return;
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // The bytes just before this chunk and its first ones: a name cut by the chunk boundary is found there.
    const seam = this.tail.length > 0 ? Buffer.concat([this.tail, buf.subarray(0, SEAM_BYTES)]) : null;
    this.countDeltas(buf, seam);
    this.keepLastBytes(buf);
    let from = buf;
    if (this.decoder === null) {
      const at = terminalAt(buf, seam);
      if (at === NOT_FOUND) {
        this.keepTail(buf);
        return;
      }
      this.decoder = createSseDecoder(this.maxEventBytes);
      // Decoding starts at the event the name is in: the blank line before it in this chunk, else what was carried.
      const start = at === SEAM ? -1 : lastBlankLineEnd(buf.subarray(0, at));
      if (start >= 0) from = buf.subarray(start);
      else for (const piece of this.carry) this.decoder.push(piece);
      this.carry = [];
      this.carried = 0;
    }
    for (const sse of this.decoder.push(from)) {
      // Only terminal events carry usage: an event that names another type is not parsed.
      if (sse.event !== undefined && !TERMINAL_EVENT_TYPES.has(sse.event)) continue;
      // A terminal event that says so in its payload's first bytes: its usage is read from its text, not parsed
      // with the whole answer it carries.
      const usage = sse.event !== undefined && opensWithType(sse.data, sse.event) ? terminalUsageFromText(sse.data) : undefined;
      if (usage !== undefined) {
        this.usage = usage;
        this.ended = true;
        continue;
      }
      try {
        const ev = parseStreamEvent(sse);
        if (ev !== "done" && TERMINAL_EVENT_TYPES.has(ev.type)) {
          this.usage = usageOf(ev) ?? this.usage;
          this.ended = true;
        }
      } catch {
        // Raw callers handle the upstream's own behaviour, malformed events included.
      }
    }
  }

  push(chunk: Uint8Array): Uint8Array {
    return chunk;
  }

  end(): { out: Uint8Array; status: number } {
    return { out: EMPTY, status: this.okStatus };
  }

  /**
   * `event: response.output_text.delta` lines: the name ends the line (in the JSON, `.delta` is followed by a quote).
   * One cut by the chunk boundary is counted in the seam, once: when its line break is in this chunk.
   */
  private countDeltas(buf: Buffer, seam: Buffer | null): void {
    // Searched with its line break: in the JSON `.delta` is followed by a quote, so every hit is a delta's name.
    this.deltas += occurrences(buf, DELTA_LF);
    if (this.crSeen || buf.includes(CR)) {
      this.crSeen = true;
      this.deltas += occurrences(buf, DELTA_CR);
    }
    if (seam === null) return;
    const before = this.tail.length;
    for (let at = seam.indexOf(DELTA); at >= 0 && at < before; at = seam.indexOf(DELTA, at + 1)) {
      const next = seam[at + DELTA.length];
      if (at + DELTA.length >= before && (next === LF || next === CR)) this.deltas++;
    }
  }

  /** The stream's last SEAM_BYTES bytes, for the next chunk's seam. */
  private keepLastBytes(buf: Buffer): void {
    if (buf.length >= SEAM_BYTES) this.tail = Buffer.from(buf.subarray(buf.length - SEAM_BYTES));
    else {
      const joined = Buffer.concat([this.tail, buf]);
      this.tail = joined.subarray(Math.max(0, joined.length - SEAM_BYTES));
    }
  }

  /** Keeps what follows the chunk's last blank line (an event still arriving), so decoding can start at an event. */
  private keepTail(buf: Buffer): void {
    const boundary = lastBlankLineEnd(buf);
    if (boundary >= 0) {
      this.carry = boundary === buf.length ? [] : [Uint8Array.prototype.slice.call(buf, boundary)];
      this.carried = buf.length - boundary;
      return;
    }
    // No boundary: the event still arriving goes on, within the same bound as every decoded event.
    this.carried += buf.length;
    if (this.carried > this.maxEventBytes) throw new SseEventTooLargeError(this.maxEventBytes);
    this.carry.push(Uint8Array.prototype.slice.call(buf));
  }
}

function occurrences(buf: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = buf.indexOf(needle); at >= 0; at = buf.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** The index just past the last blank line (LF LF, CRLF CRLF or CR CR) in `buf`, or -1. */
function lastBlankLineEnd(buf: Buffer): number {
  const lf = buf.lastIndexOf("\n\n");
  // Without a CR in it, the LF form is the only one.
  if (lf >= 0 && buf.indexOf(CR, lf) < 0) return lf + 2;
  const crlf = buf.lastIndexOf("\r\n\r\n");
  const cr = buf.lastIndexOf("\r\r");
  return Math.max(lf < 0 ? -1 : lf + 2, crlf < 0 ? -1 : crlf + 4, cr < 0 ? -1 : cr + 2);
}

const NOT_FOUND = -1;
const SEAM = -2;

/** Where a terminal event's name first is in the chunk, SEAM when only across its start, or NOT_FOUND. */
function terminalAt(buf: Buffer, seam: Buffer | null): number {
  let first = NOT_FOUND;
  for (const m of TERMINAL_MARKERS) {
    const at = buf.indexOf(m);
    if (at >= 0 && (first === NOT_FOUND || at < first)) first = at;
  }
  if (first !== NOT_FOUND || seam === null) return first;
  for (const m of TERMINAL_MARKERS) if (seam.includes(m)) return SEAM;
  return NOT_FOUND;
}

const EMPTY = new Uint8Array(0);

/** A JSON reply: its text read for `usage` as it passes; its last chunk waits for the ledger. */
export class RawJsonRelay extends RawRelay {
  private readonly text = new TextDecoder();
  private jsonText = "";
  // Past MAX_JSON_USAGE_SCAN: the reply's last pieces, at most about JSON_TAIL_BYTES, for its trailing usage.
  private tail: string[] = [];
  private tailLength = 0;
  private held: Uint8Array | null = null;

  protected see(chunk: Uint8Array): void {
    const piece = this.text.decode(chunk, { stream: true });
    if (this.tail.length === 0 && this.jsonText.length + piece.length <= MAX_JSON_USAGE_SCAN) {
      this.jsonText += piece;
      return;
    }
    if (this.tail.length === 0) this.tail.push(this.jsonText);
    this.tail.push(piece);
    this.tailLength += piece.length;
    while (this.tail.length > 1 && this.tailLength - this.tail[0]!.length >= JSON_TAIL_BYTES) this.tailLength -= this.tail.shift()!.length;
  }

  push(chunk: Uint8Array): Uint8Array {
    const out = this.held ?? EMPTY;
    this.held = chunk;
    return out;
  }

  end(): { out: Uint8Array; status: number } {
    if (this.tail.length > 0) this.usage = lastUsageObject(this.tail.join(""));
    else {
      try {
        const parsed = JSON.parse(this.jsonText);
        this.usage = (parsed?.usage as ResponsesUsage) ?? (parsed?.response?.usage as ResponsesUsage) ?? null;
      } catch {
        // Not JSON after all: nothing to settle from.
      }
    }
    const out = this.held ?? EMPTY;
    this.held = null;
    return { out, status: this.okStatus };
  }
}
