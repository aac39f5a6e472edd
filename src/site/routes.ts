/** The public site API: releases and downloads, announcements and heartbeats. */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";
import { engagementRoutes } from "./engagement-routes";
import { releaseRoutes } from "./releases/release-routes";

export function siteRoutes(deps: AppDeps) {
  return new Elysia({ name: "site" }).use(releaseRoutes(deps)).use(engagementRoutes(deps));
}
