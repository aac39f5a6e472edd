/**
 * createApp(deps): composes the feature plugins into one Elysia app. It never listens: the server shell
 * (server.ts) and the tests hand it requests.
 */
import { Elysia } from "elysia";
import { AppError } from "./errors";
import type { AppDeps } from "./deps";
import { errorFromElysia } from "./http/errors";
import { handleResponses } from "./gateway/responses-route";
import { handleChatCompletions } from "./gateway/chat-route";
import { handleModels } from "./gateway/models";
import { keysApi } from "./admin/keys-api";
import { releasesApi } from "./admin/releases-api";
import { engagementApi } from "./admin/engagement-api";
import { siteRoutes } from "./site/routes";
import { schemaVersion } from "./store/db";
import { SCHEMA_VERSION } from "./store/migrations";

function gatewayRoutes(deps: AppDeps) {
  const app = new Elysia({ name: "gateway" });
  // The gateway reads its own bodies (bounded, and raw mode needs the exact bytes): no framework parsing.
  for (const prefix of ["/v1", ""]) {
    app.post(`${prefix}/responses`, ({ request }) => handleResponses(deps, request), { parse: "none" });
    app.post(`${prefix}/chat/completions`, ({ request }) => handleChatCompletions(deps, request), { parse: "none" });
    app.get(`${prefix}/models`, ({ request }) => handleModels(deps, request));
  }
  return app;
}

function adminGuard(deps: AppDeps) {
  return new Elysia({ name: "admin-guard" }).onBeforeHandle({ as: "global" }, ({ request, path }) => {
    if (!path.startsWith("/admin/api/")) return;
    if (!deps.adminAuth.verifyHeader(request.headers.get("authorization"))) {
      throw new AppError("unauthorized", "The admin API needs 'Authorization: Bearer <admin token>'.");
    }
  });
}

export function createApp(deps: AppDeps) {
  return new Elysia()
    .onError(({ code, error }) => {
      const err = errorFromElysia(code, error, deps.log);
      return new Response(JSON.stringify(err.toBody()), {
        status: err.status,
        headers: { "content-type": "application/json", ...err.headers },
      });
    })
    .get("/healthz", () => ({ status: "ok" }))
    .get("/readyz", ({ set }) => {
      try {
        const version = schemaVersion(deps.db);
        if (version !== SCHEMA_VERSION) throw new Error(`schema ${version}, expected ${SCHEMA_VERSION}`);
        return { status: "ready", schemaVersion: version };
      } catch (err) {
        set.status = 503;
        return { error: { message: `Not ready: ${(err as Error).message}`, type: "server_error", code: "service_unavailable", param: null } };
      }
    })
    .use(gatewayRoutes(deps))
    .use(siteRoutes(deps))
    .use(adminGuard(deps))
    .use(keysApi(deps))
    .use(releasesApi(deps))
    .use(engagementApi(deps));
}

export type App = ReturnType<typeof createApp>;
