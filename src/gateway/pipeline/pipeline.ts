/**
 * The one loop every gateway stream runs through, whatever the caller gets (Responses events, chat chunks, a
 * collected object, the upstream's raw bytes): read the upstream, hand each batch to the sink, write what it
 * returns; keep the connection alive while the upstream is silent; hold the batch that ends the reply until the
 * ledger has committed the call and a kept response is stored (a reply received whole is always billed, and a kept
 * one can be fetched; otherwise the caller is told why instead); settle exactly once, as 499 when the
 * caller went away; abort the upstream when the reply ends early (the caller left, or the sink said it is done).
 */
import type { AppError } from "../../errors";
import type { PipelineCall, PipelineEnd } from "./pipeline-call";
import type { StallWatch as FullStallWatch } from "./stall-watch";

type StallWatch = Pick<FullStallWatch, "track" | "untrack">;
import type { ResponsesUsage } from "../wire/responses-types";

export const IDLE = Symbol("idle");

export type Output = string | Uint8Array;

/** What the loop reads: batches of upstream events (or bytes), and what it learnt of the response so far. */
export interface PipelineSource<B> {
  read(): AsyncGenerator<B | typeof IDLE>;
  /** True once the response's terminal event was read: the batch that carried it ends the reply. */
  readonly ended: boolean;
  /** The upstream body was read to its end (then nothing is left to abort). */
  readonly drained?: boolean;
  /** What follows the terminal event goes to the caller too (raw): the body is read on until the upstream ends it. */
  readonly relaysAfterEnd?: boolean;
  readonly usage: ResponsesUsage | null;
  /** After the last batch: what went wrong in-band (the upstream's own failure, or a stream cut short), or null. */
  readonly endFailure: { code: string; message: string } | null;
}

/** How a failure is recorded in the ledger, and what the caller is told in the reply's last bytes. */
export interface FailureOutcome {
  status: number;
  code: string;
  out: Output;
}

export interface PipelineSink<B> {
  /** Written when the upstream has been silent for a keep-alive interval; null writes nothing. */
  readonly keepAlive: Output | null;
  /** The caller's bytes for one batch ("" for none). */
  push(batch: B): Output;
  /**
   * After the last batch: the bytes that end the reply, and the status the ledger records for an in-band failure
   * (with its code, when it is not the upstream's own).
   */
  end(failure: { code: string; message: string } | null): { out: Output; status: number; code?: string };
  /**
   * Done before the call is settled when the stream ended well (keeping the response): committed before the end
   * is delivered, like the ledger row; when it fails, the answer is withheld (PipelineEnd.keep).
   */
  beforeSettle?(): Promise<void>;
  /** What replaces the end when the answer is withheld (`reason`: what PipelineCall.settle answered); null keeps the end. */
  withheld(reason: AppError): Output | null;
  /** A transport or protocol failure mid-stream: what is recorded and told; null rethrows it (raw callers). */
  broken(err: unknown): FailureOutcome | null;
  /** The ledger status of a stream that ended well (raw replies keep the upstream's). */
  readonly okStatus?: number;
  readonly okCode?: string | null;
  /**
   * Only on a sink that may end the reply before the upstream does (Gantry cut it: a stop sequence); the loop reads it
   * after each batch, so sinks without it cost nothing more. Null until the batch just pushed gave the reply's last
   * bytes; then what the ledger records beside the success status, saying why the call ended early. The upstream is
   * then cut as for a caller that went away, the call settled at once (charged the estimate of what was produced:
   * no usage came), and the bytes delivered after the ledger's commit, as a terminal batch's are.
   */
  readonly finishedEarly?: () => string | null;
}

/**
 * Drives one stream to its end. Yields the caller's bytes; `stalls` watches a caller that stops reading (null for a
 * collected reply, which yields nothing).
 */
export async function* runPipeline<B>(call: PipelineCall, source: PipelineSource<B>, sink: PipelineSink<B>, stalls: StallWatch | null): AsyncGenerator<Output> {
  // From here the pipeline settles the call; its slot comes back once the upstream body is closed too, not at its
  // terminal event alone.
  call.started();
  const stall = stalls?.track(() => call.stalled()) ?? null;
  let status = sink.okStatus ?? 200;
  let errorCode: string | null = sink.okCode ?? null;
  let held: Output[] = [];
  let settled = false;
  // Read once: a sink that never ends early adds one test of a local per batch.
  const mayFinishEarly = sink.finishedEarly !== undefined;
  let cutCode: string | null = null;
  const it = source.read();
  try {
    for (;;) {
      const next = await it.next();
      if (next.done) break;
      const batch = next.value;
      let out: Output;
      if (batch === IDLE) {
        if (sink.keepAlive === null) continue;
        out = sink.keepAlive;
      } else {
        out = sink.push(batch);
        if (mayFinishEarly && !source.ended) cutCode = sink.finishedEarly!();
      }
      if (source.ended || cutCode !== null) {
        // The reply's end waits for the ledger's commit below.
        if (!isEmpty(out)) held.push(out);
        break;
      }
      if (isEmpty(out)) continue;
      if (stall) {
        stall.waiting = true;
        stall.chunks++;
      }
      yield out;
      if (stall) stall.waiting = false;
    }
    if (!(source.ended && source.relaysAfterEnd)) {
      // The upstream call is over: its body was read to its end, or nothing more is read after the terminal event
      // and the body is cancelled now (the source's finally), before the call is settled. So its slot comes back
      // with the upstream connection closed, and before the caller has its answer.
      await it.return(undefined).catch(() => {});
    }
    // Cut by the sink, the reply is whole though the upstream's terminal event never came.
    const failure = cutCode !== null ? null : source.endFailure;
    if (cutCode !== null) errorCode = cutCode;
    const end = sink.end(failure);
    if (!isEmpty(end.out)) held.push(end.out);
    if (failure) {
      errorCode = end.code ?? failure.code;
      status = end.status;
    }
    // A stream that ended well keeps its response (when the sink does) before it is settled.
    const keep = !failure && sink.beforeSettle ? () => sink.beforeSettle!() : undefined;
    const settling: PipelineEnd = { status, errorCode, usage: source.usage, upstreamClosed: !(source.ended && source.relaysAfterEnd), keep };
    if (cutCode !== null) settling.cut = true;
    const withheld = await call.settle(settling);
    settled = true;
    // Not everything the end waits for was committed: the caller is told why instead of getting the end.
    if (withheld) {
      const instead = sink.withheld(withheld);
      if (instead !== null) held = [instead];
    }
    for (const out of held) yield out;
    held = [];
    // Whatever follows the terminal event (raw callers get every byte): passed on as it comes.
    for (;;) {
      const next = await it.next();
      if (next.done) break;
      if (next.value === IDLE) continue;
      const out = sink.push(next.value);
      if (!isEmpty(out)) yield out;
    }
  } catch (err) {
    // The upstream body is done with (the read failed, or a sink did: then cancelled now, as after the end); the
    // settlement below, or the finally's, says it is closed.
    it.return(undefined).catch(() => {});
    if (call.upstreamAbort.signal.aborted) {
      // The caller went away: nothing more to say to it.
      status = 499;
      errorCode = "client_closed";
      return;
    }
    if (settled) throw err;
    const outcome = sink.broken(err);
    if (outcome === null) {
      status = 502;
      errorCode = "upstream_stream_error";
      throw err;
    }
    status = outcome.status;
    errorCode = outcome.code;
    await call.settle({ status, errorCode, usage: source.usage, upstreamClosed: true });
    // What was held ends the reply as a success: it is never sent before a failure.
    if (!isEmpty(outcome.out)) yield outcome.out;
  } finally {
    if (stall) stalls!.untrack(stall);
    // After the terminal event the source has released the upstream body already; aborting then only costs. A reply
    // the sink ended early is aborted here too: the body was cancelled above, the request is ended for certain.
    if (!source.ended && !source.drained) call.upstreamAbort.abort();
    it.return(undefined).catch(() => {});
    // Unsettled and still "ok" here: the server abandoned the body at a yield, because the caller went away
    // mid-stream. It is charged for what was produced until then (estimated when no usage came).
    // The upstream body is drained, aborted, or cancelled by the return() above (an async generator's finally runs
    // within it). Settled already, this only closes it.
    const ok = errorCode === (sink.okCode ?? null) && status === (sink.okStatus ?? 200);
    void call.settle({ status: ok ? 499 : status, errorCode: ok ? "client_closed" : errorCode, usage: source.usage, upstreamClosed: true });
  }
}

function isEmpty(out: Output): boolean {
  return out.length === 0;
}

/** A streamed reply driven by the pipeline: settled as the caller going away if the server never pulls it. */
export function pipelineResponse<B>(call: PipelineCall, source: PipelineSource<B>, sink: PipelineSink<B>, stalls: StallWatch, status: number, headers: Record<string, string>): Response {
  call.settleIfStreamNeverStarts();
  return new Response(runPipeline(call, source, sink, stalls) as unknown as BodyInit, { status, headers });
}

/** Runs a stream whose sink gathers the reply (a collected response): nothing is written while it runs. */
export async function drainPipeline<B>(call: PipelineCall, source: PipelineSource<B>, sink: PipelineSink<B>): Promise<void> {
  for await (const _ of runPipeline(call, source, sink, null)) {
    // A collecting sink returns no bytes.
  }
}
