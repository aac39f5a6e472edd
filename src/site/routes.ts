/** The public site API: releases and downloads, announcements and heartbeats. */
import { Elysia } from "elysia";
import { corsOf, isCorsPath, keepCors } from "./http/cors";
import { heartbeatRoutes, type HeartbeatRoutesDeps } from "./heartbeats/heartbeat-routes";
import { refuseRepeatedParams } from "./http/rules/query-params";
import { feedRoutes, type FeedRoutesDeps } from "./protocols/feed-routes";
import { releaseRoutes, type ReleaseRoutesDeps } from "./releases/release-routes";
import type { SiteDocuments } from "./site-documents";

export type SiteDeps = ReleaseRoutesDeps & HeartbeatRoutesDeps & FeedRoutesDeps;

/** `documents`: the public documents (site-documents.ts), made once and also served by Bun's native route table. */
export function siteRoutes(deps: SiteDeps, documents: SiteDocuments) {
  const { cors } = documents;
  const preflight = ({ request }: { request: Request }) => cors.preflight(request.headers.get("origin"));
  const app = new Elysia({ name: "site" })
    // Local to the site's routes: CORS headers chosen once per request and kept on it (cors.ts), for the routes'
    // replies and the app's error handler to add; then one rule for repeated query parameters on every route
    // (query-params.ts). Deliberately not through Elysia's `set`: a hook that touches `set` takes every route
    // of the plugin off Elysia's fast path (a third of /api/v1/latest's throughput).
    .onBeforeHandle(({ request, path }) => {
      if (isCorsPath(path)) keepCors(request, cors.headersFor(request));
      return refuseRepeatedParams(request.url, corsOf(request));
    })
    .options("/api/v1/*", preflight)
    .options("/update/latest.json", preflight);
  for (const doc of documents.routes) app.get(doc.path, ({ request }) => doc.get(request));
  return app.use(releaseRoutes(deps)).use(heartbeatRoutes(deps)).use(feedRoutes(deps));
}
