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
import { clientAddress } from "../../http/client-address";
import { buildLatestDocument, buildLegacyManifestOf, parseLatestQuery, planLatest, planLegacyManifest, type LatestPlan } from "./latest";
import { rolloutClientId, rolloutOffers } from "./rollout";
import { readParam } from "../query-params";
import { DOCUMENT_CACHE_CONTROL, revalidatedBody } from "../revalidation";
import { corsOf } from "../cors";
import { DocumentCache, renderDocument, whenReady, type RenderedDocument } from "../document-cache";
import { HEARTBEAT_INTERVAL_SECONDS, ONLINE_WINDOW_SECONDS } from "../heartbeats/heartbeat-input";
import type { ReleaseServices } from "./release-services";

export interface ReleaseRoutesDeps {
  /** Public URL and trusted proxies: the links in documents point where the client reached us. */
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  /** Documents are rebuilt when the releases change (by this process, another one, or the CLI). */
  changes: Pick<ChangeFeed, "version">;
  releases: Pick<ReleaseServices, "offered" | "downloads">;
}

export function releaseRoutes(deps: ReleaseRoutesDeps) {
  const { offered, downloads } = deps.releases;
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
        const ctx = { baseUrl, heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS, onlineWindowSeconds: ONLINE_WINDOW_SECONDS };
        const variants = documents.getValue(`latest\n${baseUrl}\n${q.platform ?? ""}\n${q.arch ?? ""}\n${q.fileType ?? ""}`, async () =>
          renderVariants(planLatest(await offered(), q), (r) => buildLatestDocument(r, q, ctx)),
        );
        return whenReady(variants, (v) => variantReply(request, query, v));
      })
      /**
       * Decision: with no downloadable web-*.zip in any (non pre-)release the answer is 404 with the error
       * envelope, still marked `no-cache` so the first published bundle is seen at once. A missing manifest
       * is what the earlier static site answered, and an updater treats it as "no update available".
       */
      .get("/update/latest.json", ({ request, query }) => {
        const baseUrl = publicBaseUrl(request, deps.config);
        const variants = documents.getValue(`manifest\n${baseUrl}`, async () =>
          renderVariants(planLegacyManifest(await offered()), (r) => buildLegacyManifestOf(r, { baseUrl })),
        );
        return whenReady(variants, (v) => {
          const m = v.staged.length === 0 ? v.base : pickRendered(v, clientIdOf(request, query));
          if (m.empty) {
            const res = errorResponse(new AppError("not_found", "No web bundle (web-*.zip) has been published yet."), {
              "cache-control": DOCUMENT_CACHE_CONTROL,
              ...corsOf(request),
            });
            if (v.staged.length > 0) res.headers.append("vary", CLIENT_ID_HEADER_NAME);
            return res;
          }
          return variantReply(request, query, v, m);
        });
      })
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

/**
 * The rendered documents of a plan: `base` for everyone, one per release in a staged rollout. With no rollout
 * in progress (`staged` empty) the reply is `base` and no client is looked at.
 */
interface RenderedVariants {
  base: RenderedDocument;
  staged: Array<{ release: LatestPlan["staged"][number]; doc: RenderedDocument }>;
}

function renderVariants(plan: LatestPlan, build: (r: LatestPlan["base"]) => unknown): RenderedVariants {
  return {
    base: renderDocument(build(plan.base)),
    staged: plan.staged.map((release) => ({ release, doc: renderDocument(build(release)) })),
  };
}

const CLIENT_ID_HEADER_NAME = "X-App-Client-ID";

/** The client's id: the X-App-Client-ID header, else the `client_id` query parameter; malformed = none. */
function clientIdOf(request: Request, query: unknown): string | null {
  const header = request.headers.get(CLIENT_ID_HEADER_NAME);
  if (header !== null && header.trim() !== "") return rolloutClientId(header);
  return rolloutClientId(readParam(query as Record<string, unknown>, "client_id"));
}

function pickRendered(v: RenderedVariants, clientId: string | null): RenderedDocument {
  if (clientId !== null) {
    for (const s of v.staged) if (rolloutOffers(s.release, clientId)) return s.doc;
  }
  return v.base;
}

/**
 * The document for this client, revalidated against its own ETag (each variant is a different body, so a
 * different tag). While a rollout is in progress the reply varies with the header: `Vary: X-App-Client-ID`
 * (the query parameter is part of the URL already).
 */
function variantReply(request: Request, query: unknown, v: RenderedVariants, chosen?: RenderedDocument): Response {
  if (v.staged.length === 0) return revalidatedBody(request, v.base.body, v.base.etag);
  const d = chosen ?? pickRendered(v, clientIdOf(request, query));
  const res = revalidatedBody(request, d.body, d.etag);
  res.headers.append("vary", CLIENT_ID_HEADER_NAME);
  return res;
}
