/** The public site API: releases and downloads, announcements and heartbeats. */
import { Elysia } from "elysia";
import { engagementRoutes, type EngagementRoutesDeps } from "./engagement-routes";
import { refuseRepeatedParams } from "./query-params";
import { releaseRoutes, type ReleaseRoutesDeps } from "./releases/release-routes";

export type SiteDeps = ReleaseRoutesDeps & EngagementRoutesDeps;

export function siteRoutes(deps: SiteDeps) {
  return (
    new Elysia({ name: "site" })
      // Local to the site's routes: one rule for repeated query parameters on all of them (query-params.ts).
      .onBeforeHandle(({ request }) => refuseRepeatedParams(request.url))
      .use(releaseRoutes(deps))
      .use(engagementRoutes(deps))
  );
}
