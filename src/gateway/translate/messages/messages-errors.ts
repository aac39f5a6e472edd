/**
 * Gantry's errors in Anthropic's terms (pure): one table from each AppError code to Anthropic's error type and the
 * status it goes with. Anthropic's SDKs pick their error class by status (400 BadRequest, 401 Authentication,
 * 403 Permission, 404 NotFound, 413, 429 RateLimit, 5xx InternalServer, 529 overloaded), so the status follows the
 * type; codes the table does not know (an upstream's own, passed on) are placed by their status.
 */
import type { AppError, ErrorCode } from "../../../errors";
import type { MessagesErrorBody, MessagesErrorType } from "./messages-types";

interface Mapped {
  type: MessagesErrorType;
  /** The status the caller gets; absent: the AppError's own. */
  status?: number;
}

const OVERLOADED: Mapped = { type: "overloaded_error", status: 529 };

export const MESSAGES_ERRORS: Readonly<Record<ErrorCode, Mapped>> = {
  missing_api_key: { type: "authentication_error" },
  invalid_api_key: { type: "authentication_error" },
  api_key_disabled: { type: "permission_error" },
  api_key_expired: { type: "authentication_error" },
  api_key_not_yet_valid: { type: "authentication_error" },
  model_not_allowed: { type: "permission_error" },
  quota_exceeded: { type: "rate_limit_error" },
  rate_limit_rpm: { type: "rate_limit_error" },
  rate_limit_rpd: { type: "rate_limit_error" },
  concurrent_limit: { type: "rate_limit_error" },
  max_tokens_exceeded: { type: "invalid_request_error" },
  invalid_json: { type: "invalid_request_error" },
  invalid_request: { type: "invalid_request_error" },
  missing_client_id: { type: "invalid_request_error" },
  body_too_large: { type: "request_too_large" },
  unsupported_media_type: { type: "invalid_request_error" },
  not_found: { type: "not_found_error" },
  method_not_allowed: { type: "invalid_request_error" },
  upgrade_required: { type: "invalid_request_error" },
  gone: { type: "not_found_error" },
  range_not_satisfiable: { type: "invalid_request_error" },
  precondition_failed: { type: "invalid_request_error" },
  unauthorized: { type: "authentication_error" },
  forbidden: { type: "permission_error" },
  too_many_requests: { type: "rate_limit_error" },
  conflict: { type: "invalid_request_error" },
  upstream_error: { type: "api_error" },
  upstream_timeout: { type: "api_error" },
  upstream_unavailable: OVERLOADED,
  upstream_not_configured: { type: "api_error" },
  service_unavailable: OVERLOADED,
  internal_error: { type: "api_error" },
};

/** Statuses an upstream answers when it is overloaded; Anthropic says that with 529. */
const OVERLOAD_STATUSES = new Set([503, 529]);

/** An error's Anthropic type and status. `upstreamStatus`: what the upstream answered, when the error is its refusal. */
export function messagesErrorOf(err: Pick<AppError, "code" | "status">, upstreamStatus?: number): { type: MessagesErrorType; status: number } {
  if (upstreamStatus !== undefined && OVERLOAD_STATUSES.has(upstreamStatus)) return { type: OVERLOADED.type, status: OVERLOADED.status! };
  const known = (MESSAGES_ERRORS as Record<string, Mapped | undefined>)[err.code];
  if (known !== undefined) return { type: known.type, status: known.status ?? err.status };
  return { type: typeByStatus(err.status), status: err.status };
}

function typeByStatus(status: number): MessagesErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

export function messagesErrorBody(type: MessagesErrorType, message: string): MessagesErrorBody {
  return { type: "error", error: { type, message } };
}
