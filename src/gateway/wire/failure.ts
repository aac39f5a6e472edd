/**
 * How a failure reaches the caller once the upstream was reached (pure). Before the caller got any byte it is
 * an HTTP status with the envelope; after, it is in-band: a `response.failed` event with the next
 * sequence_number for Responses callers (the chat route has its own error chunk).
 */
import { AppError } from "../../errors";
import type { ResponseObject, ResponsesStreamEvent } from "./responses-types";

/** Upstream failure codes that mean the caller's request was at fault. */
const CALLER_FAULT_CODES = new Set([
  "context_length_exceeded",
  "invalid_prompt",
  "invalid_request_error",
  "invalid_value",
  "invalid_image",
  "invalid_image_url",
  "unsupported_parameter",
  "content_policy_violation",
]);

export function mapStreamFailure(code: string, message: string): AppError {
  if (code === "rate_limit_exceeded" || code === "insufficient_quota" || code === "usage_not_included") {
    return new AppError("too_many_requests", message, { rawCode: code, headers: { "retry-after": "1" } });
  }
  if (CALLER_FAULT_CODES.has(code)) return new AppError("invalid_request", message, { rawCode: code });
  return new AppError("upstream_error", message, { rawCode: code });
}

/**
 * The opening event of a reply whose end is replaced by a failure before the caller got any event (its whole
 * answer came in one read): SDKs expect `response.created` before anything else.
 */
export function createdResponseEvent(snapshot: ResponseObject | null, nowMs: number): ResponsesStreamEvent {
  const response = { ...responseOrBlank(snapshot, nowMs), status: "in_progress", output: [], usage: null, error: null, incomplete_details: null };
  return { type: "response.created", sequence_number: 0, response: response as ResponseObject };
}

function responseOrBlank(snapshot: ResponseObject | null, nowMs: number): ResponseObject {
  return snapshot ?? ({ id: "", object: "response", created_at: Math.floor(nowMs / 1000), model: "", output: [], usage: null } as unknown as ResponseObject);
}

/**
 * `nowMs` dates the response when the upstream never sent one (no snapshot): the caller's clock, not ours.
 * The failed response carries no output, whatever the snapshot held: the snapshot may be the terminal response
 * itself (an answer withheld because its usage could not be recorded), and a failure that repeats the answer
 * would deliver what it withholds.
 */
export function failedResponseEvent(
  snapshot: ResponseObject | null,
  sequenceNumber: number,
  code: string,
  message: string,
  nowMs: number,
): ResponsesStreamEvent {
  const { output_text: _text, ...base } = responseOrBlank(snapshot, nowMs) as ResponseObject & { output_text?: unknown };
  const response: ResponseObject = {
    ...base,
    output: [],
    status: "failed",
    error: { code, message },
    incomplete_details: null,
  } as ResponseObject;
  return { type: "response.failed", sequence_number: sequenceNumber, response };
}

export const STREAM_ENDED_EARLY = {
  code: "stream_incomplete",
  message: "The upstream stream ended before the response was complete.",
};

/** A transport or protocol failure while reading the upstream's stream, for a caller not yet answered. */
export function upstreamStreamError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AppError("upstream_error", `The upstream stream failed: ${message}`, { rawCode: "upstream_stream_error" });
}
