/** Replies of a gateway call that are not the upstream's: an error before any byte was sent, and the SSE headers. */
import { AppError, errorResponse } from "../../errors";
import { knownError } from "../../state/storage-errors";
import type { CallDeps } from "../gateway-deps";
import { UpstreamRefusal } from "../upstream/upstream-errors";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
} as const;

export type ErrorRenderer = (err: AppError, headers: Record<string, string>) => Response;

/** What an error reply needs of the call: its id, its headers and its settlement. */
export interface FailingCall {
  readonly request: Request;
  readonly requestId: string;
  headers(extra?: Record<string, string>): Record<string, string>;
  readonly settlement: { finish(status: number, errorCode: string | null): Promise<void> };
}

/** The reply for an error before any byte was sent; settles the call (committed before the reply leaves). */
export async function errorReply(deps: Pick<CallDeps, "log">, call: FailingCall, err: unknown, render: ErrorRenderer = errorResponse): Promise<Response> {
  const appErr = knownError(err) ?? internalError(deps, err, call.requestId);
  // A caller that went away is what ended the call (the upstream failing is only the consequence). Nobody reads
  // the reply, but its status is what the HTTP metrics count: 499 there too, as in the ledger.
  if (call.request.signal?.aborted) {
    await call.settlement.finish(499, "client_closed");
    return new Response(null, { status: 499, headers: call.headers() });
  }
  if (appErr instanceof UpstreamRefusal) {
    // What the upstream said is for the operator, under this id; the caller gets the mapped error.
    deps.log.warn("upstream refused the request", { requestId: call.requestId, upstreamStatus: appErr.upstreamStatus, detail: appErr.detail });
    if (appErr.generic) appErr.message = `${appErr.message} (request ${call.requestId})`;
  }
  await call.settlement.finish(appErr.status, appErr.code);
  return render(appErr, call.headers(appErr.headers));
}

export function internalError(deps: Pick<CallDeps, "log">, err: unknown, requestId: string): AppError {
  deps.log.error("unexpected error", { requestId, error: err instanceof Error ? err.stack ?? err.message : String(err) });
  return new AppError("internal_error", `Internal error (request ${requestId}).`);
}
