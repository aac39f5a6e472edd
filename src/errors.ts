/**
 * The one error type of Gantry. Every failure that reaches a caller is an AppError, rendered in one place
 * (http/errors.ts) as `{ "error": { "message", "type", "code", "param" } }`.
 *
 * The `type` of each code is our decision (the spec shows only `invalid_request_error` on a rate-limit reply);
 * it follows OpenAI's usage so SDKs classify errors the way their users expect. See README "Error codes".
 */

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "insufficient_quota"
  | "not_found_error"
  | "upstream_error"
  | "server_error";

interface CodeInfo {
  status: number;
  type: ErrorType;
}

/** The fixed table: code -> HTTP status and error type. Codes are a public contract; never rename one. */
export const ERROR_CODES = {
  // Admission (spec table, in check order)
  missing_api_key: { status: 401, type: "authentication_error" },
  invalid_api_key: { status: 401, type: "authentication_error" },
  api_key_disabled: { status: 403, type: "permission_error" },
  api_key_expired: { status: 401, type: "authentication_error" },
  api_key_not_yet_valid: { status: 401, type: "authentication_error" },
  model_not_allowed: { status: 403, type: "permission_error" },
  quota_exceeded: { status: 429, type: "insufficient_quota" },
  rate_limit_rpm: { status: 429, type: "invalid_request_error" },
  rate_limit_rpd: { status: 429, type: "invalid_request_error" },
  concurrent_limit: { status: 429, type: "invalid_request_error" },
  max_tokens_exceeded: { status: 400, type: "invalid_request_error" },
  // Request shape
  invalid_json: { status: 400, type: "invalid_request_error" },
  invalid_request: { status: 400, type: "invalid_request_error" },
  missing_client_id: { status: 400, type: "invalid_request_error" },
  body_too_large: { status: 413, type: "invalid_request_error" },
  unsupported_media_type: { status: 415, type: "invalid_request_error" },
  not_found: { status: 404, type: "not_found_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
  upgrade_required: { status: 426, type: "invalid_request_error" },
  gone: { status: 410, type: "invalid_request_error" },
  range_not_satisfiable: { status: 416, type: "invalid_request_error" },
  precondition_failed: { status: 412, type: "invalid_request_error" },
  unauthorized: { status: 401, type: "authentication_error" },
  forbidden: { status: 403, type: "permission_error" },
  too_many_requests: { status: 429, type: "invalid_request_error" },
  conflict: { status: 409, type: "invalid_request_error" },
  // Upstream
  upstream_error: { status: 502, type: "upstream_error" },
  upstream_timeout: { status: 504, type: "upstream_error" },
  upstream_unavailable: { status: 502, type: "upstream_error" },
  upstream_not_configured: { status: 503, type: "upstream_error" },
  // Ours
  service_unavailable: { status: 503, type: "server_error" },
  internal_error: { status: 500, type: "server_error" },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface AppErrorOptions {
  /** Overrides the table's status (e.g. an upstream 4xx passed on with its own status). */
  status?: number;
  type?: ErrorType | string;
  param?: string | null;
  headers?: Record<string, string>;
  /** A code that is not in the table (upstream codes passed through, e.g. `context_length_exceeded`). */
  rawCode?: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message);
    const info: CodeInfo = ERROR_CODES[code];
    this.name = "AppError";
    this.status = options.status ?? info.status;
    this.type = options.type ?? info.type;
    this.code = options.rawCode ?? code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

export interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * The one renderer of the error envelope as a Response, for the error plugin, the guard, the gateway and handlers
 * that return early. `baseHeaders` (e.g. the security headers already set) go under the content type and the
 * error's own headers; `extraHeaders` go over them.
 */
export function errorResponse(err: AppError, extraHeaders?: Record<string, string>, baseHeaders?: Record<string, string>): Response {
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: { ...baseHeaders, "content-type": "application/json", ...err.headers, ...extraHeaders },
  });
}
