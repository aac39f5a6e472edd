/**
 * Query parameters of the site API (pure). One rule for every site route: a parameter given more than once is
 * a 400 naming it (`refuseRepeatedParams`, run before any site handler), whether or not the route reads it — a
 * repeated filter has no single meaning, and Elysia would otherwise silently keep the last value on some routes
 * while others refused. Absent is "", values are trimmed.
 */
import { AppError, errorResponse } from "../../../errors";

export function readParam(raw: Record<string, unknown>, name: string): string {
  const v = raw[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") {
    throw new AppError("invalid_request", `Query parameter '${name}' must be given once.`, { param: name });
  }
  return v.trim();
}

/** What a request without a query reads: no parameters. */
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));

/**
 * The query of `url` as one value per name (what `readParam` reads), or the error for the first parameter given
 * twice: one pass over the query for both the rule and the handler.
 */
export function singleParams(url: string): Readonly<Record<string, string>> | AppError {
  const q = url.indexOf("?");
  // The common case, no query at all, costs one scan for "?".
  return q === -1 ? NO_PARAMS : queryParams(url.slice(q + 1));
}

/** The same for a query string without its "?". */
export function queryParams(query: string): Readonly<Record<string, string>> | AppError {
  if (query === "") return NO_PARAMS;
  // No prototype: a parameter named `__proto__` or `constructor` is just a parameter.
  const params: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(query)) {
    if (Object.hasOwn(params, name)) {
      return new AppError("invalid_request", `Query parameter '${name.slice(0, 64)}' must be given once.`, { param: name.slice(0, 64) });
    }
    params[name] = value;
  }
  return params;
}

/** The 400 for the first parameter that appears twice in `url` (with `headers`, e.g. CORS), else undefined (the handler runs). */
export function refuseRepeatedParams(url: string, headers?: Readonly<Record<string, string>>): Response | undefined {
  const params = singleParams(url);
  return params instanceof AppError ? errorResponse(params, headers as Record<string, string> | undefined) : undefined;
}
