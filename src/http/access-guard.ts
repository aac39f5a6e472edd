/**
 * Who may reach the back office and /metrics, decided before routing (so an unauthenticated request never
 * gets its body parsed or validated, and cannot tell a bad body from a bad credential):
 *
 * - `/admin/api/*`: `Authorization: Bearer <admin token>` (scripts), or a live session cookie (the browser
 *   UI); with the cookie, every change (any method but GET/HEAD/OPTIONS) also needs the session's CSRF token
 *   in `X-CSRF-Token` and must not come from another site.
 * - other `/admin` pages: a live session; a browser without one is sent to the sign-in page.
 *   `/admin/sign-in` and `/admin/assets/*` are open (they hold no data).
 * - `/metrics`: the admin token or a session, unless GANTRY_METRICS_PUBLIC=true.
 *
 * Every spelling of a path is guarded like its canonical form (`canonicalPath`): `/metrics/`, `/METRICS`,
 * `//metrics`, `/%6detrics` and `/metrics/.` are `/metrics`.
 *
 * Wrong admin tokens count against the client address (FailureThrottle) and, past a few, their 401 is held
 * back for a growing delay; a right token is never refused because of someone else's failures from the same
 * address. Every admin, portal and docs reply, and the landing page (/), gets the security headers.
 */
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { AdminAuth } from "./admin-auth";
import { AppError, errorResponse, type ErrorCode } from "../errors";
import { csrfMatches } from "./csrf";
import { clientAddress } from "./client-address";
import { publicBaseUrl } from "./public-url";
import { requestIdOf, type RecordRequest } from "./request-log";
import { NO_STORE, SECURITY_HEADERS } from "./security-headers";
import type { WebState } from "./web-state";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
export const CSRF_HEADER = "x-csrf-token";

interface GuardContext {
  request: Request;
  path: string;
  set: { headers: Record<string, string | number>; status?: number | string };
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + "/");
}

/**
 * The one form of a path the guard decides on, so that no other spelling of a guarded path slips past it while
 * the router still serves it (the router ignores a trailing slash, for one): percent-encoded unreserved
 * characters decoded (`/%6detrics`), lower case, runs of slashes as one, `.` and `..` segments resolved, no
 * trailing slash. Encoded reserved characters (`%2F`) stay encoded: they never separate segments.
 */
export function canonicalPath(path: string): string {
  const decoded = path.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(char) ? char : escape;
  });
  const segments: string[] = [];
  for (const segment of decoded.toLowerCase().split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return "/" + segments.join("/");
}

/**
 * Whether a change comes from another site (defence in depth beside SameSite and the CSRF token). Browsers
 * send Sec-Fetch-Site; older ones only Origin, compared with our public host (GANTRY_PUBLIC_URL, a trusted
 * proxy's X-Forwarded-Host, else Host), so a proxy that rewrites Host does not lock operators out.
 */
export function isCrossSite(request: Request, config: Pick<Config, "publicUrl" | "trustedProxies">): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin" && site !== "none";
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  try {
    return new URL(origin).host !== new URL(publicBaseUrl(request, config)).host;
  } catch {
    return true;
  }
}

/** Where a signed-out browser asking for `path` is sent; only our own page paths survive as `next`. */
export function signInLocation(path: string): string {
  return /^\/admin(\/[a-z-]{1,40})?$/.test(path) && path !== "/admin" ? `/admin/sign-in?next=${encodeURIComponent(path)}` : "/admin/sign-in";
}

/** What the guard reads: the settings (public URL, trusted proxies, metrics access) and the admin token. */
export interface GuardDeps {
  config: Config;
  adminAuth: AdminAuth;
}

export function accessGuard(deps: GuardDeps, web: WebState, record: RecordRequest) {
  const refuse = (ctx: GuardContext, route: string, code: ErrorCode, message: string, headers: Record<string, string> = {}) => {
    const err = new AppError(code, message, { headers });
    record(ctx.request, route, err.status);
    return errorResponse(err, undefined, ctx.set.headers as Record<string, string>);
  };

  /** undefined = let the request through; a Response = refused. */
  const checkBearer = async (ctx: GuardContext, route: string, authorization: string): Promise<Response | undefined> => {
    if (await deps.adminAuth.verifyHeader(authorization)) return undefined;
    await web.adminThrottle.slowFailure(clientAddress(ctx.request));
    return refuse(ctx, route, "unauthorized", "The admin token is not valid.", { "www-authenticate": 'Bearer realm="gantry-admin"' });
  };

  const secureHeaders = (ctx: GuardContext) => {
    Object.assign(ctx.set.headers, SECURITY_HEADERS);
    ctx.set.headers["cache-control"] = NO_STORE;
    ctx.set.headers["x-request-id"] = requestIdOf(ctx.request);
  };

  const adminArea = async (ctx: GuardContext, raw: string): Promise<Response | undefined> => {
    const { path, request } = ctx;
    secureHeaders(ctx);
    if (raw === "/admin/sign-in" || (raw.startsWith("/admin/assets/") && path.startsWith("/admin/assets/"))) return undefined;
    const api = under(path, "/admin/api");
    const route = api ? "/admin/api/*" : "/admin/*";
    const authorization = request.headers.get("authorization");
    if (api && authorization !== null) return checkBearer(ctx, route, authorization);

    const session = await web.sessionOf(request);
    if (!session) {
      if (!api && (request.method === "GET" || request.method === "HEAD")) {
        record(ctx.request, route, 303);
        return new Response(null, { status: 303, headers: { ...(ctx.set.headers as Record<string, string>), location: signInLocation(path) } });
      }
      return refuse(ctx, route, "unauthorized", "Sign in to the back office, or send 'Authorization: Bearer <admin token>'.");
    }
    if (SAFE_METHODS.has(request.method)) return undefined;
    if (isCrossSite(request, deps.config)) return refuse(ctx, route, "forbidden", "Changes must come from the back office's own pages.");
    if (!csrfMatches(session, request.headers.get(CSRF_HEADER))) {
      return refuse(ctx, route, "forbidden", "Missing or wrong CSRF token: reload the page and try again.");
    }
    return undefined;
  };

  const metrics = async (ctx: GuardContext): Promise<Response | undefined> => {
    const authorization = ctx.request.headers.get("authorization");
    if (authorization !== null) return checkBearer(ctx, "/metrics", authorization);
    if (await web.sessionOf(ctx.request)) return undefined;
    return refuse(ctx, "/metrics", "unauthorized", "GET /metrics needs 'Authorization: Bearer <admin token>' (or set GANTRY_METRICS_PUBLIC=true).", {
      "www-authenticate": 'Bearer realm="gantry-metrics"',
    });
  };

  // Destructured on purpose: see request-log.ts. Areas are told apart by the canonical path; the open pages of
  // the back office only by their exact spelling (what the router serves for any other spelling stays guarded).
  const guard = ({ request, path: raw, set }: GuardContext): Promise<Response | undefined> | undefined => {
    const path = canonicalPath(raw);
    if (under(path, "/admin")) return adminArea({ request, path, set }, raw);
    if (path === "/" || under(path, "/portal") || under(path, "/docs")) return void secureHeaders({ request, path, set });
    if (path === "/metrics" && !deps.config.metricsPublic) return metrics({ request, path, set });
  };
  return new Elysia({ name: "access-guard" }).onRequest(guard as never);
}
