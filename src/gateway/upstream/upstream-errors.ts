/**
 * Maps upstream failures into the error envelope (pure). The upstream answers refusals either FastAPI-style
 * (`{"detail": "..."}`) or OpenAI-style (`{"error": {...}}`); both are understood.
 */
import { AppError } from "../../errors";

export function parseUpstreamErrorBody(text: string): { message: string; code: string | null; type: string | null; param: string | null } {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: text.trim().slice(0, 500) || "upstream error", code: null, type: null, param: null };
  }
  if (parsed && typeof parsed === "object") {
    const e = parsed.error;
    if (e && typeof e === "object") {
      return {
        message: String(e.message ?? "upstream error"),
        code: e.code != null ? String(e.code) : null,
        type: e.type != null ? String(e.type) : null,
        param: e.param != null ? String(e.param) : null,
      };
    }
    if (typeof e === "string") return { message: e, code: null, type: null, param: null };
    const d = parsed.detail;
    if (typeof d === "string") return { message: d, code: null, type: null, param: null };
    if (d !== undefined) return { message: JSON.stringify(d).slice(0, 500), code: null, type: null, param: null };
    if (typeof parsed.message === "string") return { message: parsed.message, code: null, type: null, param: null };
  }
  return { message: text.slice(0, 500) || "upstream error", code: null, type: null, param: null };
}

/**
 * Upstream 4xx: the caller's request was refused, so the caller gets the same status and message.
 * Upstream 401/403: the gateway's own upstream credential is at fault, not the caller's: 502.
 * Upstream 429: passed on with its Retry-After. 5xx: 502.
 */
export function mapUpstreamError(status: number, bodyText: string, retryAfter: string | null): AppError {
  const body = parseUpstreamErrorBody(bodyText);
  if (status === 401 || status === 403) {
    return new AppError("upstream_error", `The upstream refused the gateway's credentials (${status}): ${body.message}`);
  }
  if (status === 429) {
    return new AppError("too_many_requests", body.message, {
      rawCode: body.code ?? "upstream_rate_limited",
      type: body.type ?? "invalid_request_error",
      headers: { "retry-after": retryAfter ?? "1" },
    });
  }
  if (status >= 400 && status < 500) {
    return new AppError("invalid_request", body.message, {
      status,
      rawCode: body.code ?? "upstream_invalid_request",
      type: body.type ?? "invalid_request_error",
      param: body.param,
    });
  }
  return new AppError("upstream_error", `The upstream failed (${status}): ${body.message}`);
}
