/**
 * Counts every request by route template and status (metrics) and writes one JSON log line per request for
 * the routes that do not log themselves: the gateway routes log their own line, with key, model and tokens,
 * when they settle (gateway/call.ts), so they are counted here but not logged twice.
 *
 * The label is the route template (`/admin/api/keys/:id`), never the raw path, so the metric's cardinality
 * is bounded by the routes we define; requests that match no route share one label. Duration is the time
 * until the handler returned its reply; a download or stream continues after that.
 *
 * Headers are not added here on purpose: any header Elysia has to merge makes it copy the Response (and
 * re-wrap a streamed body), which gateway streams and downloads must not pay for.
 */
import { Elysia } from "elysia";
import type { Logger } from "../log";
import type { Metrics } from "./metrics";
import { requestIdFor } from "./request-id";
import { existingRequestState, requestState } from "./request-state";

export const UNMATCHED_ROUTE = "(unmatched)";

/** Route templates whose handlers log their own request line (gateway/call.ts); a wrong method on the same
 *  path matches no route and is logged here. */
const SELF_LOGGED = new Set(["/v1/responses", "/responses", "/v1/chat/completions", "/chat/completions", "/v1/messages", "/messages", "/v1/models", "/models"]);

/** Probes and scrapes arrive every few seconds: logged at debug so they do not drown the info log. */
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Methods outside this set share one label: a client could otherwise invent label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/*
 * Start and id live in the request's state (request-state.ts). Hooks take only the context fields they use: a hook
 * that hands the whole context to a function makes Elysia assume every route reads cookies, query, headers
 * and body, and parse them all on every request.
 */

/** The request's id, made once: the caller's X-Request-Id when it looks like an id, else a new one. */
export function requestIdOf(request: Request): string {
  const state = requestState(request);
  return (state.requestId ??= requestIdFor(request));
}

/**
 * Counts and logs one request. `start` (performance.now() at arrival) is given by callers that time the request
 * themselves (native-routes.ts); otherwise it is the time the onRequest hook kept.
 */
/** What the log line of a route depends on, worked out once per route template (templates are ours: few). */
interface RouteFacts {
  /** The template as a JSON string. */
  quoted: string;
  /** null: the route logs its own line. */
  level: "debug" | "info" | null;
}

const routeFacts = new Map<string, RouteFacts>();

function factsOf(route: string): RouteFacts {
  let f = routeFacts.get(route);
  if (f === undefined) {
    const level = SELF_LOGGED.has(route) ? null : QUIET.has(route) || route.endsWith("/assets/:name") ? "debug" : "info";
    f = { quoted: JSON.stringify(route), level };
    // Bounded all the same.
    if (routeFacts.size >= 1024) routeFacts.clear();
    routeFacts.set(route, f);
  }
  return f;
}

export type RecordRequest = (request: Request, route: string, status: number, start?: number) => void;

function statusOf(set: { status?: number | string }, value: unknown): number {
  if (value instanceof Response) return value.status;
  return typeof set.status === "number" ? set.status : 200;
}

export function requestLog(deps: { metrics?: Metrics; log: Logger }): { plugin: Elysia<any, any, any, any, any, any, any>; record: RecordRequest } {
  const record: RecordRequest = (request, route, status, start) => {
    const method = METHODS.has(request.method) ? request.method : "OTHER";
    deps.metrics?.httpRequest(route, method, status);
    const { level, quoted } = factsOf(route);
    if (level === null || !deps.log.enabled(level)) return;
    const state = existingRequestState(request);
    const since = start ?? state?.start;
    // An id made here is not kept on the request: nothing reads it after its log line.
    const requestId = state?.requestId ?? requestIdFor(request);
    // Written without JSON.stringify (a third of this line's cost): the id is of URL-safe characters
    // (request-id.ts), the method one of METHODS, the status and duration numbers, the route quoted once.
    let members = `"requestId":"${requestId}","route":${quoted},"method":"${method}","status":${status}`;
    if (since !== undefined) members += `,"durationMs":${Math.round((performance.now() - since) * 10) / 10}`;
    deps.log.members(level, "request", members);
  };
  const plugin = new Elysia({ name: "request-log" })
    .onRequest(({ request }) => {
      requestState(request).start = performance.now();
    })
    // After the handler, not after the response: Elysia runs afterResponse hooks in a setImmediate of their
    // own per request. Errors are recorded where they are rendered (app.ts), refusals by the access guard.
    .onAfterHandle({ as: "global" }, ({ request, route, set, responseValue }) => {
      record(request, route || UNMATCHED_ROUTE, statusOf(set, responseValue));
    });
  return { plugin, record };
}
