/**
 * What the pipeline needs of the call it runs, declared here and implemented by the exchange's settlement: the
 * pipeline knows no key, lease, ledger or log, only these few moments of a call's end.
 */
import type { AppError } from "../../errors";
import type { ResponsesUsage } from "../wire/responses-types";
import type { TokenCounts } from "../wire/token-counts";

/** Estimates the tokens of a call from what went up and what came back, for a call cut before usage was reported. */
export interface UsageMeter {
  estimate(): TokenCounts;
}

export interface PipelineCall {
  /** Aborts the upstream request (linked to the caller's disconnect). */
  readonly upstreamAbort: AbortController;
  /**
   * The pipeline starts (the server pulled a streamed body, or a collection began): from then on it settles the
   * call, and the upstream body is being read, so the lease is given back only once that body is closed too.
   */
  started(): void;
  upstreamBodyClosed(): void;
  /** The caller stopped reading: abort the upstream and settle as cut by the caller. */
  stalled(): void;
  /** Settles exactly once; resolves when the ledger row is committed. */
  finish(status: number, errorCode: string | null, usage?: ResponsesUsage | null): Promise<void>;
  /** Keeping the response failed: the answer is to be withheld. */
  keepFailed(err: unknown): void;
  /** Why the answer is withheld (the ledger row or the kept response not committed), or null. */
  readonly withheld: AppError | null;
  /** A streamed reply is about to be returned: settle it as the caller going away if its body never runs. */
  settleIfStreamNeverStarts(): void;
}
