/** The public site API: releases and downloads, announcements and heartbeats. */
import { Elysia } from "elysia";
import { engagementRoutes, type EngagementRoutesDeps } from "./engagement-routes";
import { releaseRoutes, type ReleaseRoutesDeps } from "./releases/release-routes";

export type SiteDeps = ReleaseRoutesDeps & EngagementRoutesDeps;

export function siteRoutes(deps: SiteDeps) {
  return new Elysia({ name: "site" }).use(releaseRoutes(deps)).use(engagementRoutes(deps));
}
