/** The one place errors become HTTP replies: always the envelope, never a stack trace. */
import { AppError, isAppError } from "../errors";
import type { Logger } from "../log";

export function errorFromElysia(code: string | number, error: unknown, log: Logger): AppError {
  if (isAppError(error)) return error;
  switch (code) {
    case "NOT_FOUND":
      return new AppError("not_found", "No such route.");
    case "PARSE":
      return new AppError("invalid_json", "The request body could not be parsed.");
    case "VALIDATION": {
      const e = error as { all?: Array<{ path?: string; summary?: string; message?: string }> };
      const first = e.all?.[0];
      const param = first?.path ? first.path.replace(/^\//, "").replaceAll("/", ".") : null;
      const detail = first?.summary ?? first?.message ?? "invalid value";
      return new AppError("invalid_request", param ? `Invalid '${param}': ${detail}` : `Invalid request: ${detail}`, { param });
    }
    case "INVALID_COOKIE_SIGNATURE":
      return new AppError("unauthorized", "Invalid session.");
    default:
      log.error("unhandled error", { code: String(code), error: error instanceof Error ? error.stack ?? error.message : String(error) });
      return new AppError("internal_error", "Internal error.");
  }
}
