/**
 * Query parameters of the site API (pure). One rule for every site route: a parameter given more than once is
 * a 400 naming it (`refuseRepeatedParams`, run before any site handler), whether or not the route reads it — a
 * repeated filter has no single meaning, and Elysia would otherwise silently keep the last value on some routes
 * while others refused. Absent is "", values are trimmed.
 */
import { AppError, errorResponse } from "../errors";

export function readParam(raw: Record<string, unknown>, name: string): string {
  const v = raw[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") {
    throw new AppError("invalid_request", `Query parameter '${name}' must be given once.`, { param: name });
  }
  return v.trim();
}

/** The 400 for the first parameter that appears twice in `url`, else undefined (the handler runs). */
export function refuseRepeatedParams(url: string): Response | undefined {
  const q = url.indexOf("?");
  // The common case, no query at all, costs one scan for "?".
  if (q === -1 || q === url.length - 1) return undefined;
  const seen = new Set<string>();
  for (const name of new URLSearchParams(url.slice(q + 1)).keys()) {
    if (seen.has(name)) {
      return errorResponse(new AppError("invalid_request", `Query parameter '${name.slice(0, 64)}' must be given once.`, { param: name.slice(0, 64) }));
    }
    seen.add(name);
  }
  return undefined;
}
