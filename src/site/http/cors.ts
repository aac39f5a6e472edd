/**
 * CORS for the public site API (`/api/v1/*` and `/update/latest.json`), so web clients can read the documents
 * and send heartbeats. Admin, portal and gateway routes get none: they are not for other sites' pages.
 *
 * Every origin by default: a constant `Access-Control-Allow-Origin: *` (no credentials are ever involved, and a
 * shared cache may hand the same copy to any page). With GANTRY_CORS_ORIGINS set, a listed Origin is echoed and
 * every reply says `Vary: Origin`, so a cache never gives one origin's copy to another. Pure: values in, headers out
 * (only the choice kept for a request goes to the request's state).
 */
import { existingRequestState, requestState } from "../../http/request-state";

/** Methods and request headers a page may use (the heartbeat's JSON body and id header, revalidation). */
const ALLOW_METHODS = "GET, HEAD, POST, OPTIONS";
const ALLOW_HEADERS = "content-type, x-app-client-id, if-none-match, if-match";
/** Browsers cap this (Chromium at 2 h); a day costs nothing and saves a preflight per heartbeat where honoured. */
const MAX_AGE_SECONDS = "86400";
/** What a page may read besides the safelisted headers: the tag to revalidate with, and when to retry. */
const EXPOSE_HEADERS = "etag, retry-after";

const ANY_ORIGIN: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSE_HEADERS,
});

const NOT_LISTED: Readonly<Record<string, string>> = Object.freeze({ vary: "Origin" });

export function isCorsPath(path: string): boolean {
  return path.startsWith("/api/v1/") || path === "/update/latest.json";
}

export class SiteCors {
  private readonly origins: ReadonlySet<string> | null;
  /**
   * The headers for each listed origin as sent, made once: the same object for the same origin lets a document
   * reuse the headers it built for it (revalidation.ts).
   */
  private readonly echoed = new Map<string, Readonly<Record<string, string>>>();

  /** `origins`: the operator's list (empty = every origin). */
  constructor(origins: readonly string[]) {
    this.origins = origins.length === 0 ? null : new Set(origins.map((o) => o.toLowerCase()));
  }

  /** Headers for a reply to `request`: its Origin header is read only when an origin list makes it matter. */
  headersFor(request: Request): Readonly<Record<string, string>> {
    return this.origins === null ? ANY_ORIGIN : this.headers(request.headers.get("origin"));
  }

  /** Headers for a reply to `origin` (the request's Origin header, or null). */
  headers(origin: string | null): Readonly<Record<string, string>> {
    if (this.origins === null) return ANY_ORIGIN;
    if (origin !== null && this.origins.has(origin.toLowerCase())) {
      let echoed = this.echoed.get(origin);
      if (echoed === undefined) {
        echoed = Object.freeze({ "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSE_HEADERS, vary: "Origin" });
        // Only spellings of listed origins get here; bounded all the same.
        if (this.echoed.size >= 64) this.echoed.clear();
        this.echoed.set(origin, echoed);
      }
      return echoed;
    }
    return NOT_LISTED;
  }

  /**
   * The answer to an OPTIONS request: 204 with what the page may send. An origin that is not allowed gets the
   * 204 without Allow-Origin, which the browser reads as a refusal.
   */
  preflight(origin: string | null): Response {
    const base = this.headers(origin);
    const headers: Record<string, string> = { ...base };
    if ("access-control-allow-origin" in base) {
      headers["access-control-allow-methods"] = ALLOW_METHODS;
      headers["access-control-allow-headers"] = ALLOW_HEADERS;
      headers["access-control-max-age"] = MAX_AGE_SECONDS;
    }
    return new Response(null, { status: 204, headers });
  }
}

/**
 * The CORS headers chosen for a request, kept in the request's state: each site reply adds them where it is built
 * (revalidation.ts for the documents, the heartbeat route, the app's error handler), at the cost of a spread.
 */
export function keepCors(request: Request, headers: Readonly<Record<string, string>>): void {
  requestState(request).cors = headers;
}

/** The headers `keepCors` kept for this request; undefined off the CORS paths. */
export function corsOf(request: Request): Readonly<Record<string, string>> | undefined {
  return existingRequestState(request)?.cors;
}
