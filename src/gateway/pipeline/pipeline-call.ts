/**
 * What the pipeline needs of the call it runs, declared here and implemented by the exchange's settlement: the
 * pipeline knows no key, lease, ledger or log, only these few moments of a call: it starts, its caller stalls, it
 * ends (one `settle` per end, saying how).
 */
import type { AppError } from "../../errors";
import type { ResponsesUsage } from "../wire/responses-types";
import type { TokenCounts } from "../wire/token-counts";

/** Estimates the tokens of a call from what went up and what came back, for a call cut before usage was reported. */
export interface UsageMeter {
  estimate(): TokenCounts;
}

/** How a call ended, as the pipeline saw it. */
export interface PipelineEnd {
  /** What the ledger records (a kept response that could not be stored overrides them). */
  status: number;
  errorCode: string | null;
  usage: ResponsesUsage | null;
  /**
   * The upstream body is closed by now (read to its end, cancelled or aborted): the lease may come back as soon as
   * the call is settled. False while raw bytes after the terminal event are still relayed.
   */
  upstreamClosed: boolean;
  /**
   * Gantry ended the call before the upstream reported its usage (the sink finished early): it is charged the
   * estimate of what was produced until then, as a call its caller cut is.
   */
  cut?: boolean;
  /**
   * Committed before the call is settled when the stream ended well (keeping the response): like the ledger row,
   * it must be committed before the caller gets the end; when it fails, the answer is withheld.
   */
  keep?: () => Promise<void>;
}

export interface PipelineCall {
  /** Aborts the upstream request (linked to the caller's disconnect). */
  readonly upstreamAbort: AbortController;
  /**
   * The pipeline starts (the server pulled a streamed body, or a collection began): from then on it settles the
   * call, and the upstream body is being read, so the lease is given back only once that body is closed too.
   */
  started(): void;
  /** The caller stopped reading: abort the upstream and settle as cut by the caller. */
  stalled(): void;
  /**
   * The call's end: keeps what `end.keep` keeps, then settles exactly once (a later call only closes the upstream
   * body, if it says so, and answers as the first). Resolves, once the ledger row is committed, with why the answer
   * is withheld (the kept response or the ledger row not committed), or null to deliver it. Without `keep`, it
   * settles synchronously: a caller may leave the promise unawaited.
   */
  settle(end: PipelineEnd): Promise<AppError | null>;
  /** A streamed reply is about to be returned: settle it as the caller going away if its body never runs. */
  settleIfStreamNeverStarts(): void;
}
