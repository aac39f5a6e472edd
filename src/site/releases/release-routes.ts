/**
 * The public download endpoints: /api/v1/download/:assetId and /dl/:token. Routes validate and delegate to the
 * download service. The release documents (/api/v1/latest, /update/latest.json) are in release-documents.ts.
 */
import { Elysia } from "elysia";
import type { Config } from "../../config";
import { AppError, errorResponse } from "../../errors";
import { publicBaseUrl } from "../../http/public-url";
import { clientAddress } from "../../http/client-address";
import { corsOf } from "../http/cors";
import type { ReleaseServices } from "./release-services";

export interface ReleaseRoutesDeps {
  /** Public URL and trusted proxies: the redirect points where the client reached us. */
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  releases: Pick<ReleaseServices, "downloads">;
}

export function releaseRoutes(deps: ReleaseRoutesDeps) {
  const { downloads } = deps.releases;
  return (
    new Elysia({ name: "site-releases" })
      /** 302 to an absolute /dl/{token} on the same public base as downloadUrl (a path prefix in GANTRY_PUBLIC_URL is kept). */
      .get("/api/v1/download/:assetId", async ({ request, params }) => {
        const token = await downloads.issue(params.assetId, clientAddress(request));
        return new Response(null, {
          status: 302,
          // Each visit must mint its own link: a cached redirect would hand out a used token.
          headers: { location: `${publicBaseUrl(request, deps.config)}/dl/${token}`, "cache-control": "no-store", ...corsOf(request) },
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
        return downloads.serve(request, params.token, clientAddress(request));
      })
  );
}
