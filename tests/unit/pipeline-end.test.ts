/**
 * The pipeline ends a call in one call per phase: `settle(end)` says how it ended (status, code, usage, whether the
 * upstream body is closed, what to keep first) and answers what to deliver (null, or why the answer is withheld).
 * The call here is a recording stand-in that implements only PipelineCall: any other settlement method the
 * pipeline reached for would fail these tests. (The settlement's own behaviour is covered end to end by the
 * keep-failure, ledger-failure, billing-cuts and client-disconnects integration suites.)
 */
import { expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { drainPipeline, runPipeline, type Output, type PipelineSink, type PipelineSource } from "../../src/gateway/pipeline/pipeline";
import type { PipelineCall, PipelineEnd } from "../../src/gateway/pipeline/pipeline-call";
import { collectUpstream } from "../../src/gateway/pipeline/collect-upstream";
import type { UpstreamEventSource } from "../../src/gateway/pipeline/event-source";

const USAGE = { input_tokens: 3, output_tokens: 4, total_tokens: 7 };

/** A PipelineCall that records what it is told and answers each settle with `answer`. */
function recordingCall(answer: AppError | null = null) {
  const calls: string[] = [];
  const ends: Array<Omit<PipelineEnd, "keep"> & { keeps: boolean }> = [];
  const kept: string[] = [];
  const call: PipelineCall = {
    upstreamAbort: new AbortController(),
    started: () => void calls.push("started"),
    stalled: () => void calls.push("stalled"),
    settleIfStreamNeverStarts: () => void calls.push("settleIfStreamNeverStarts"),
    async settle(end) {
      calls.push("settle");
      const { keep, ...rest } = end;
      ends.push({ ...rest, keeps: keep !== undefined });
      if (keep) await keep().then(() => kept.push("kept"));
      return answer;
    },
  };
  return { call, calls, ends, kept };
}

/** Two batches, the second carrying the terminal event; `failure` for an in-band one. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function source(failure: { code: string; message: string } | null = null): Mutable<PipelineSource<string>> {
  return {
    ended: false,
    drained: false,
    usage: null,
    endFailure: null,
    async *read() {
      yield "a";
      this.ended = true;
      this.drained = true;
      this.usage = USAGE;
      this.endFailure = failure;
      yield "b";
    },
  };
}

function sink(keeps: boolean): PipelineSink<string> {
  return {
    keepAlive: null,
    push: (batch) => batch.toUpperCase(),
    end: (failure) => (failure ? { out: "[failed]", status: 502, code: "upstream_error" } : { out: "[end]", status: 200 }),
    ...(keeps ? { beforeSettle: async () => {} } : {}),
    withheld: (reason) => `[withheld: ${reason.code}]`,
    broken: () => null,
  };
}

async function run(call: PipelineCall, src: PipelineSource<string>, snk: PipelineSink<string>): Promise<string> {
  let out = "";
  for await (const chunk of runPipeline(call, src, snk, null)) out += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk as Output as Uint8Array);
  return out;
}

test("a stream that ended well is settled in one call, keeping first, and its end delivered", async () => {
  const { call, calls, ends, kept } = recordingCall();
  expect(await run(call, source(), sink(true))).toBe("AB[end]");
  // The end is one settle; the second is the close every run ends with (a no-op for a settled call).
  expect(calls).toEqual(["started", "settle", "settle"]);
  expect(ends[0]).toEqual({ status: 200, errorCode: null, usage: USAGE, upstreamClosed: true, keeps: true });
  expect(kept).toEqual(["kept"]);
  expect(ends[1]).toMatchObject({ upstreamClosed: true, keeps: false });
});

test("when settle answers that the answer is withheld, the caller gets why instead of the end", async () => {
  const { call } = recordingCall(new AppError("service_unavailable", "not recorded"));
  expect(await run(call, source(), sink(true))).toBe("A[withheld: service_unavailable]");
});

test("an in-band failure is settled with the sink's status and code, keeping nothing", async () => {
  const { call, ends } = recordingCall();
  expect(await run(call, source({ code: "server_error", message: "boom" }), sink(true))).toBe("AB[failed]");
  expect(ends[0]).toEqual({ status: 502, errorCode: "upstream_error", usage: USAGE, upstreamClosed: true, keeps: false });
});

test("raw bytes after the terminal event: settled with the upstream body still open, closed at the run's end", async () => {
  const { call, ends } = recordingCall();
  const src = { ...source(), relaysAfterEnd: true };
  await drainPipeline(call, src, sink(false));
  expect(ends.map((e) => e.upstreamClosed)).toEqual([false, true]);
});

test("a collected reply whose answer is withheld fails with the reason settle answered", async () => {
  const reason = new AppError("service_unavailable", "The response could not be stored");
  const { call } = recordingCall(reason);
  const events: Mutable<PipelineSource<never[]>> & { readsAll?: boolean } = {
    ended: false,
    usage: null,
    endFailure: null,
    async *read() {
      this.ended = true;
      yield [];
    },
  };
  await expect(collectUpstream(call, events as unknown as UpstreamEventSource, new Set())).rejects.toBe(reason);
});

test("a sink that says it is done ends the reply there: the upstream read no further and aborted, settled as a cut success", async () => {
  const { call, calls, ends } = recordingCall();
  let read = 0;
  let closed = false;
  const src: Mutable<PipelineSource<string>> = {
    ended: false,
    drained: false,
    usage: null,
    endFailure: { code: "stream_ended_early", message: "no terminal event" },
    async *read() {
      try {
        for (const b of ["a", "stop", "c", "d"]) {
          read++;
          yield b;
        }
      } finally {
        closed = true;
      }
    },
  };
  let done: string | null = null;
  const snk: PipelineSink<string> = {
    ...sink(true),
    push: (batch) => {
      if (batch === "stop") done = "stop_sequence";
      return batch.toUpperCase();
    },
    finishedEarly: () => done,
  };
  // The end follows the batch that finished the reply; no failure is told, though no terminal event came.
  expect(await run(call, src, snk)).toBe("ASTOP[end]");
  expect(read).toBe(2);
  expect(closed).toBe(true);
  expect(call.upstreamAbort.signal.aborted).toBe(true);
  expect(calls).toEqual(["started", "settle", "settle"]);
  expect(ends[0]).toEqual({ status: 200, errorCode: "stop_sequence", usage: null, upstreamClosed: true, keeps: true, cut: true });
});
