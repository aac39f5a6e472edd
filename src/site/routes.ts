/** The public site API: releases and downloads, announcements and heartbeats. */
import { Elysia } from "elysia";
import type { Config } from "../config";
import { SiteCors, isCorsPath, keepCors } from "./cors";
import { engagementRoutes, type EngagementRoutesDeps } from "./engagement-routes";
import { refuseRepeatedParams } from "./query-params";
import { releaseRoutes, type ReleaseRoutesDeps } from "./releases/release-routes";

export type SiteDeps = ReleaseRoutesDeps & EngagementRoutesDeps & { config: Pick<Config, "corsOrigins"> };

export function siteRoutes(deps: SiteDeps) {
  const cors = new SiteCors(deps.config.corsOrigins);
  const preflight = ({ request }: { request: Request }) => cors.preflight(request.headers.get("origin"));
  return (
    new Elysia({ name: "site" })
      // Local to the site's routes: CORS headers chosen once per request and kept on it (cors.ts), for the routes'
      // replies and the app's error handler to add; then one rule for repeated query parameters on every route
      // (query-params.ts). Deliberately not through Elysia's `set`: a hook that touches `set` takes every route
      // of the plugin off Elysia's fast path (a third of /api/v1/latest's throughput).
      .onBeforeHandle(({ request, path }) => {
        if (isCorsPath(path)) keepCors(request, cors.headers(request.headers.get("origin")));
        return refuseRepeatedParams(request.url);
      })
      .options("/api/v1/*", preflight)
      .options("/update/latest.json", preflight)
      .use(releaseRoutes(deps))
      .use(engagementRoutes(deps))
  );
}
