/**
 * Counts every request by route template and status (metrics) and writes one JSON log line per request for
 * the routes that do not log themselves: the gateway routes log their own line, with key, model and tokens,
 * when they settle (gateway/call.ts), so they are counted here but not logged twice.
 *
 * The label is the route template (`/admin/api/keys/:id`), never the raw path, so the metric's cardinality
 * is bounded by the routes we define; requests that match no route share one label. Duration is the time
 * until the reply (headers) was handed over; a download or stream continues after that.
 *
 * Headers are not added here on purpose: any header Elysia has to merge makes it copy the Response (and
 * re-wrap a streamed body), which gateway streams and downloads must not pay for.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";
import { requestIdFor } from "./request-id";

export const UNMATCHED_ROUTE = "(unmatched)";

/** Route templates whose handlers log their own request line (gateway/call.ts); a wrong method on the same
 *  path matches no route and is logged here. */
const SELF_LOGGED = new Set(["/v1/responses", "/responses", "/v1/chat/completions", "/chat/completions", "/v1/models", "/models"]);

/** Probes and scrapes arrive every few seconds: logged at debug so they do not drown the info log. */
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Methods outside this set share one label: a client could otherwise invent label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** What we keep on Elysia's per-request context object (which exists anyway; no extra allocation). */
export interface Observed {
  request: Request;
  path: string;
  gantryStart?: number;
  gantryRequestId?: string;
}

/** The request's id, made once: the caller's X-Request-Id when it looks like an id, else a new one. */
export function requestIdOf(ctx: Observed): string {
  return (ctx.gantryRequestId ??= requestIdFor(ctx.request));
}

export type RecordRequest = (ctx: Observed, route: string, status: number) => void;

function statusOf(ctx: { set: { status?: number | string }; responseValue?: unknown }): number {
  const value = ctx.responseValue;
  if (value instanceof Response) return value.status;
  return typeof ctx.set.status === "number" ? ctx.set.status : 200;
}

export function requestLog(deps: AppDeps): { plugin: Elysia<any, any, any, any, any, any, any>; record: RecordRequest } {
  const record: RecordRequest = (ctx, route, status) => {
    const method = METHODS.has(ctx.request.method) ? ctx.request.method : "OTHER";
    deps.metrics?.httpRequest(route, method, status);
    if (SELF_LOGGED.has(route)) return;
    const level = QUIET.has(route) || route.endsWith("/assets/:name") ? "debug" : "info";
    if (!deps.log.enabled(level)) return;
    const durationMs = ctx.gantryStart === undefined ? undefined : Math.round((performance.now() - ctx.gantryStart) * 10) / 10;
    deps.log[level]("request", { requestId: requestIdOf(ctx), route, method, status, durationMs });
  };
  const plugin = new Elysia({ name: "request-log" })
    .onRequest((ctx) => {
      (ctx as unknown as Observed).gantryStart = performance.now();
    })
    .onAfterResponse({ as: "global" }, (ctx) => {
      record(ctx as unknown as Observed, (ctx as { route?: string }).route || UNMATCHED_ROUTE, statusOf(ctx as never));
    });
  return { plugin, record };
}
