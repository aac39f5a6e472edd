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

export const UNMATCHED_ROUTE = "(unmatched)";

/** Route templates whose handlers log their own request line (gateway/call.ts); a wrong method on the same
 *  path matches no route and is logged here. */
const SELF_LOGGED = new Set(["/v1/responses", "/responses", "/v1/chat/completions", "/chat/completions", "/v1/models", "/models"]);

/** Probes and scrapes arrive every few seconds: logged at debug so they do not drown the info log. */
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Methods outside this set share one label: a client could otherwise invent label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * What we keep per request, keyed by the Request object. Hooks take only the context fields they use: a hook
 * that hands the whole context to a function makes Elysia assume every route reads cookies, query, headers
 * and body, and parse them all on every request.
 */
interface RequestState {
  start: number;
  requestId?: string;
}

const states = new WeakMap<Request, RequestState>();

function stateOf(request: Request): RequestState {
  let state = states.get(request);
  if (!state) states.set(request, (state = { start: performance.now() }));
  return state;
}

/** The request's id, made once: the caller's X-Request-Id when it looks like an id, else a new one. */
export function requestIdOf(request: Request): string {
  const state = stateOf(request);
  return (state.requestId ??= requestIdFor(request));
}

export type RecordRequest = (request: Request, route: string, status: number) => void;

function statusOf(set: { status?: number | string }, value: unknown): number {
  if (value instanceof Response) return value.status;
  return typeof set.status === "number" ? set.status : 200;
}

export function requestLog(deps: { metrics?: Metrics; log: Logger }): { plugin: Elysia<any, any, any, any, any, any, any>; record: RecordRequest } {
  const record: RecordRequest = (request, route, status) => {
    const method = METHODS.has(request.method) ? request.method : "OTHER";
    deps.metrics?.httpRequest(route, method, status);
    if (SELF_LOGGED.has(route)) return;
    const level = QUIET.has(route) || route.endsWith("/assets/:name") ? "debug" : "info";
    if (!deps.log.enabled(level)) return;
    const state = states.get(request);
    const durationMs = state === undefined ? undefined : Math.round((performance.now() - state.start) * 10) / 10;
    deps.log[level]("request", { requestId: requestIdOf(request), route, method, status, durationMs });
  };
  const plugin = new Elysia({ name: "request-log" })
    .onRequest(({ request }) => {
      states.set(request, { start: performance.now() });
    })
    // After the handler, not after the response: Elysia runs afterResponse hooks in a setImmediate of their
    // own per request. Errors are recorded where they are rendered (app.ts), refusals by the access guard.
    .onAfterHandle({ as: "global" }, ({ request, route, set, responseValue }) => {
      record(request, route || UNMATCHED_ROUTE, statusOf(set, responseValue));
    });
  return { plugin, record };
}
