/** Reading one query parameter (pure): absent is "", a repeated parameter is a 400, values are trimmed. */
import { AppError } from "../errors";

export function readParam(raw: Record<string, unknown>, name: string): string {
  const v = raw[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") {
    throw new AppError("invalid_request", `Query parameter '${name}' must be given once.`, { param: name });
  }
  return v.trim();
}
