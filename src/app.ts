/**
 * createApp(deps): composes the feature plugins into one Elysia app. It never listens: the server shell
 * (server.ts) and the tests hand it requests. createServing(deps) also gives the public site documents as
 * native routes (http/native-routes.ts), which the shell serves from Bun's route table ahead of the app.
 */
import { Elysia, type AnyElysia } from "elysia";
import { AppError, errorResponse } from "./errors";
import type { AppDeps } from "./deps";
import { createMethodTable, errorFromElysia } from "./http/errors";
import { handleResponses } from "./gateway/dialects/responses/responses-route";
import { handleChatCompletions } from "./gateway/dialects/chat/chat-route";
import { handleMessages } from "./gateway/dialects/messages/messages-route";
import { handleCountTokens } from "./gateway/dialects/messages/count-tokens-route";
import { handleModel, handleModels } from "./gateway/routes/models-route";
import { webSocketRefusal } from "./gateway/websocket-refusal";
import { handleDeleteResponse, handleGetResponse, handleInputItems } from "./gateway/routes/stored-responses-route";
import { keysApi } from "./admin/keys-api";
import { releasesApi } from "./admin/releases-api";
import { engagementApi } from "./admin/engagement-api";
import { announcementPreviewApi } from "./admin/announcement-preview-api";
import { metricsApi } from "./admin/metrics-api";
import { upstreamsApi } from "./admin/upstreams-api";
import { adminPages } from "./admin/pages";
import { staticAssets } from "./admin/static-assets";
import { portalRoutes } from "./portal/routes";
import { accessGuard } from "./http/access-guard";
import { landingRoutes } from "./http/landing";
import { openApiRoutes } from "./http/openapi";
import { GATEWAY_DOCS } from "./http/openapi-contract";
import { requestLog, UNMATCHED_ROUTE } from "./http/request-log";
import { createWebState } from "./http/web-state";
import { InMemoryAdminSessions } from "./admin/admin-sessions";
import { siteRoutes } from "./site/routes";
import { siteDocuments } from "./site/site-documents";
import { corsOf } from "./site/http/cors";
import type { NativeApp, NativeRoute } from "./http/native-routes";

function gatewayRoutes(deps: AppDeps) {
  const app = new Elysia({ name: "gateway" });
  // The gateway reads its own bodies (bounded, and raw mode needs the exact bytes): no framework parsing.
  for (const prefix of ["/v1", ""]) {
    // `detail` documents the body for /openapi.json only; with `parse: "none"` nothing parses or validates it.
    app.post(`${prefix}/responses`, ({ request }) => handleResponses(deps, request), { parse: "none", detail: GATEWAY_DOCS.responses });
    app.post(`${prefix}/chat/completions`, ({ request }) => handleChatCompletions(deps, request), { parse: "none", detail: GATEWAY_DOCS.chat });
    app.post(`${prefix}/messages`, ({ request }) => handleMessages(deps, request), { parse: "none", detail: GATEWAY_DOCS.messages });
    app.post(`${prefix}/messages/count_tokens`, ({ request }) => handleCountTokens(deps, request), { parse: "none", detail: GATEWAY_DOCS.countTokens });
    app.get(`${prefix}/models`, ({ request }) => handleModels(deps, request), { detail: GATEWAY_DOCS.models });
    app.get(`${prefix}/models/:id`, ({ request, params }) => handleModel(deps, request, params.id), { detail: GATEWAY_DOCS.retrieveModel });
    app.get(`${prefix}/responses/:id`, ({ request, params }) => handleGetResponse(deps, request, params.id), { detail: GATEWAY_DOCS.getResponse });
    app.get(`${prefix}/responses/:id/input_items`, ({ request, params }) => handleInputItems(deps, request, params.id), { detail: GATEWAY_DOCS.inputItems });
    app.delete(`${prefix}/responses/:id`, ({ request, params }) => handleDeleteResponse(deps, request, params.id), { detail: GATEWAY_DOCS.deleteResponse });
  }
  return app;
}

export function createApp(deps: AppDeps) {
  return createServing(deps).app;
}

export function createServing(deps: AppDeps) {
  const web = createWebState({ now: deps.now, adminAuth: deps.adminAuth, sessions: deps.adminSessions ?? new InMemoryAdminSessions(deps.now) });
  const observed = requestLog(deps);
  const documents = siteDocuments(deps);
  let root: AnyElysia | null = null;
  const allowedMethods = createMethodTable(() => root?.routes ?? []);
  /** The envelope for an error a handler threw (Elysia's `code` for it, "UNKNOWN" outside Elysia). */
  const errorReply = (request: Request, code: string | number, error: unknown, headers?: Record<string, string>): Response => {
    const path = new URL(request.url).pathname;
    // Codex's WebSocket attempt on /v1/responses gets a 426, on which it falls back to HTTP at once (not a 405).
    const refusal = code === "NOT_FOUND" ? webSocketRefusal(request.method, path, request.headers) : null;
    // A path served with other methods is a 405 with Allow, not a 404 (the table is read from `root`'s routes).
    const err = refusal ?? errorFromElysia(code, error, deps.log, { method: request.method, path, allowedMethods });
    // The guard's security headers stay on errors, and so do the site's CORS headers (site/cors.ts).
    return errorResponse(err, corsOf(request) as Record<string, string> | undefined, headers);
  };
  const app = new Elysia()
    // First: timing and counting see every request, then access is decided before any routing or parsing.
    .use(observed.plugin)
    .use(accessGuard(deps, web, observed.record))
    .onError(({ code, error, set, request, route }) => {
      const reply = errorReply(request, code, error, set.headers as Record<string, string>);
      set.status = reply.status;
      observed.record(request, route || UNMATCHED_ROUTE, reply.status);
      return reply;
    })
    .use(landingRoutes(deps.config))
    .get("/healthz", () => ({ status: "ok" }))
    .get("/readyz", async ({ set }) => {
      try {
        const { schemaVersion } = await deps.stores.ready();
        // Reading is not enough: with a full disk or a read-only database every write fails (a probe write that
        // leaves nothing behind tells, and also turns the gateway's admission away until it goes through again).
        if (!(await deps.ledgerHealth.verify())) throw new Error("the database cannot be written");
        return { status: "ready", schemaVersion };
      } catch (err) {
        set.status = 503;
        return new AppError("service_unavailable", `Not ready: ${(err as Error).message}`).toBody();
      }
    })
    // Access (admin token, session, or GANTRY_METRICS_PUBLIC) is checked by the guard.
    .get("/metrics", async () => {
      if (!deps.metrics) throw new AppError("not_found", "Metrics are not enabled.");
      const { contentType, body } = await deps.metrics.exposition();
      return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
    })
    .use(gatewayRoutes(deps))
    .use(siteRoutes(deps, documents))
    .use(keysApi(deps))
    .use(releasesApi(deps))
    .use(announcementPreviewApi(deps))
    .use(engagementApi(deps))
    .use(metricsApi(deps))
    .use(upstreamsApi(deps))
    .use(adminPages(deps, web))
    .use(portalRoutes(deps, web))
    .use(staticAssets())
    .use(openApiRoutes(() => root!));
  root = app;
  const native: { routes: readonly NativeRoute[]; app: NativeApp } = {
    routes: documents.routes,
    app: { record: observed.record, fail: (request, error) => errorReply(request, "UNKNOWN", error) },
  };
  return { app, native };
}

export type App = ReturnType<typeof createApp>;
