/**
 * Small shape checks of a parsed JSON body's fields, each failing with the 400 envelope that names the field:
 * what a route reads from a body before anything is consumed for it.
 */
import { AppError } from "../errors";

/**
 * A list field holds at most `max` entries (GANTRY_MAX_INPUT_ITEMS): checked once the body is parsed, before any
 * entry is looked at. Half a million tiny items cost seconds of the one event loop to check, rewrite, id and
 * keep, all before the upstream refused them.
 */
export function checkItemCount(body: Record<string, unknown>, field: string, max: number): void {
  const v = body[field];
  if (Array.isArray(v) && v.length > max) {
    throw new AppError("invalid_request", `'${field}' has ${v.length} entries, above the limit of ${max}.`, { param: field, rawCode: "too_many_items" });
  }
}

export function optionalCount(body: Record<string, unknown>, field: string): number | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new AppError("invalid_request", `'${field}' must be a positive integer.`, { param: field });
  }
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean") throw new AppError("invalid_request", `'${field}' must be a boolean.`, { param: field });
  return v;
}
