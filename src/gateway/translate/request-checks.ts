/** Shape checks shared by the chat request translation: a bad field is a 400 naming it. */
import { AppError } from "../../errors";
import type { JsonObject } from "../responses-types";

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function invalid(message: string, param: string | null): never {
  throw new AppError("invalid_request", message, { param });
}
