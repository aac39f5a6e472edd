/** Gantry's error codes in Anthropic's terms: one table, every code placed, statuses Anthropic's SDKs classify by. */
import { describe, expect, test } from "bun:test";
import { AppError, ERROR_CODES, type ErrorCode } from "../../src/errors";
import { MESSAGES_ERRORS, messagesErrorOf } from "../../src/gateway/translate/messages/messages-errors";

describe("messagesErrorOf", () => {
  test("every Gantry code has a row", () => {
    expect(Object.keys(MESSAGES_ERRORS).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  test("the types and statuses of the issue", () => {
    const of = (code: ErrorCode, upstreamStatus?: number) => messagesErrorOf(new AppError(code, "m"), upstreamStatus);
    expect(of("invalid_request")).toEqual({ type: "invalid_request_error", status: 400 });
    expect(of("max_tokens_exceeded")).toEqual({ type: "invalid_request_error", status: 400 });
    expect(of("invalid_api_key")).toEqual({ type: "authentication_error", status: 401 });
    expect(of("missing_api_key")).toEqual({ type: "authentication_error", status: 401 });
    expect(of("model_not_allowed")).toEqual({ type: "permission_error", status: 403 });
    expect(of("not_found")).toEqual({ type: "not_found_error", status: 404 });
    expect(of("body_too_large")).toEqual({ type: "request_too_large", status: 413 });
    expect(of("rate_limit_rpm")).toEqual({ type: "rate_limit_error", status: 429 });
    expect(of("quota_exceeded")).toEqual({ type: "rate_limit_error", status: 429 });
    expect(of("internal_error")).toEqual({ type: "api_error", status: 500 });
    expect(of("upstream_error")).toEqual({ type: "api_error", status: 502 });
    expect(of("upstream_error", 503)).toEqual({ type: "overloaded_error", status: 529 });
    expect(of("upstream_error", 529)).toEqual({ type: "overloaded_error", status: 529 });
    expect(of("service_unavailable")).toEqual({ type: "overloaded_error", status: 529 });
  });

  test("a code outside the table (an upstream's own) is placed by its status", () => {
    expect(messagesErrorOf({ code: "context_length_exceeded", status: 400 })).toEqual({ type: "invalid_request_error", status: 400 });
    expect(messagesErrorOf({ code: "upstream_rate_limited", status: 429 })).toEqual({ type: "rate_limit_error", status: 429 });
    expect(messagesErrorOf({ code: "weird", status: 500 })).toEqual({ type: "api_error", status: 500 });
  });
});
