/**
 * The public release endpoints: /api/v1/latest, /api/v1/download/:assetId, /dl/:token, /update/latest.json.
 * Routes validate and delegate: documents come from the pure builders in latest.ts, bytes from the
 * download service.
 */
import { Elysia } from "elysia";
import type { Config } from "../../config";
import type { ChangeFeed } from "../../store/change-feed";
import { AppError, errorResponse } from "../../errors";
import { publicBaseUrl } from "../../http/public-url";
import { buildLatestDocument, buildLegacyManifest, parseLatestQuery, pickLatestFor } from "./latest";
import { DOCUMENT_CACHE_CONTROL, revalidatedBody } from "../revalidation";
import { DocumentCache, whenReady } from "../document-cache";
import { HEARTBEAT_INTERVAL_SECONDS, ONLINE_WINDOW_SECONDS } from "../heartbeats/heartbeat-input";
import type { ReleaseServices } from "./release-services";

export interface ReleaseRoutesDeps {
  /** Public URL and trusted proxies: the links in documents point where the client reached us. */
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  /** Documents are rebuilt when the releases change (by this process, another one, or the CLI). */
  changes: Pick<ChangeFeed, "version">;
  releases: Pick<ReleaseServices, "store" | "downloads">;
}

export function releaseRoutes(deps: ReleaseRoutesDeps) {
  const { store, downloads } = deps.releases;
  const documents = new DocumentCache(() => deps.changes.version("releases"));
  return (
    new Elysia({ name: "site-releases" })
      /**
       * Decision: with no release published yet the answer is 200 with an empty document (version "", no
       * assets): clients still need the heartbeat settings, and "nothing to update to" is not an error.
       * Pre-releases are never offered here.
       */
      .get("/api/v1/latest", ({ request, query }) => {
        const q = parseLatestQuery(query as Record<string, unknown>);
        const baseUrl = publicBaseUrl(request, deps.config);
        const doc = documents.get(`latest\n${baseUrl}\n${q.platform ?? ""}\n${q.arch ?? ""}\n${q.fileType ?? ""}`, async () =>
          buildLatestDocument(pickLatestFor(await store.list(), q), q, {
            baseUrl,
            heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS,
            onlineWindowSeconds: ONLINE_WINDOW_SECONDS,
          }),
        );
        return whenReady(doc, (d) => revalidatedBody(request, d.body, d.etag));
      })
      /**
       * Decision: with no downloadable web-*.zip in any (non pre-)release the answer is 404 with the error
       * envelope, still marked `no-cache` so the first published bundle is seen at once. A missing manifest
       * is what the earlier static site answered, and an updater treats it as "no update available".
       */
      .get("/update/latest.json", ({ request }) => {
        const baseUrl = publicBaseUrl(request, deps.config);
        const manifest = documents.get(`manifest\n${baseUrl}`, async () => buildLegacyManifest(await store.list(), { baseUrl }));
        return whenReady(manifest, (m) => {
          if (m.empty) {
            return errorResponse(new AppError("not_found", "No web bundle (web-*.zip) has been published yet."), {
              "cache-control": DOCUMENT_CACHE_CONTROL,
            });
          }
          return revalidatedBody(request, m.body, m.etag);
        });
      })
      /** 302 to an absolute /dl/{token} on the same public base as downloadUrl (a path prefix in GANTRY_PUBLIC_URL is kept). */
      .get("/api/v1/download/:assetId", async ({ request, params }) => {
        const token = await downloads.issue(params.assetId);
        return new Response(null, {
          status: 302,
          // Each visit must mint its own link: a cached redirect would hand out a used token.
          headers: { location: `${publicBaseUrl(request, deps.config)}/dl/${token}`, "cache-control": "no-store" },
        });
      })
      /**
       * GET and HEAD. Registered with `all` on purpose: for a path that has a GET route, Elysia 1.4 answers
       * HEAD by running the GET handler and replacing Content-Length with the length of the body it got
       * (0 for our body-less HEAD answer), even when a HEAD route exists.
       */
      .all("/dl/:token", ({ request, params }) => {
        if (request.method !== "GET" && request.method !== "HEAD") {
          return errorResponse(new AppError("method_not_allowed", "Use GET or HEAD."), { allow: "GET, HEAD" });
        }
        return downloads.serve(request, params.token);
      })
  );
}
