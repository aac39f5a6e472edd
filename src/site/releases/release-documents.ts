/**
 * The release documents, /api/v1/latest and /update/latest.json, as plain functions of the request and its query:
 * the site's Elysia routes and Bun's native route table (site-documents.ts) both call them, so each behaviour
 * has one definition. Documents come from the pure builders in latest.ts, kept rendered by the document cache.
 */
import type { Config } from "../../config";
import type { ChangeFeed } from "../../state/change-feed";
import { AppError, errorResponse } from "../../errors";
import { publicBaseUrl } from "../../http/public-url";
import { buildLatestDocument, buildLegacyManifestOf, isFilteredQuery, parseLatestQuery, planLatest, planLegacyManifest } from "./rules/latest";
import { rolloutClientId } from "./rules/rollout";
import { readParam } from "../http/rules/query-params";
import { DOCUMENT_CACHE_CONTROL, documentReply } from "../http/revalidation";
import { corsOf } from "../http/cors";
import { DocumentCache, whenReady, type RenderedDocument } from "../http/document-cache";
import { pickRendered, renderVariants, variantReply, type RenderedVariants, type ReportedVersion } from "./document-variants";
import { HEARTBEAT_INTERVAL_SECONDS, ONLINE_WINDOW_SECONDS } from "../heartbeats/rules/heartbeat-input";
import type { ReleaseServices } from "./release-services";
import type { ClientRepository } from "../heartbeats/client-repository";
import type { LatestQuery } from "./rules/release-types";

export interface ReleaseDocumentsDeps {
  /** Public URL and trusted proxies: the links in documents point where the client reached us. */
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  /** Documents are rebuilt when the releases change (by this process, another one, or the CLI). */
  changes: Pick<ChangeFeed, "version">;
  /** The releases as documents offer them (signed-offer.ts). */
  releases: Pick<ReleaseServices, "offered">;
  /** A paused rollout is offered only to the clients of its group whose heartbeats report they run it. */
  stores: { clients: Pick<ClientRepository, "reportedVersion"> };
}

/** The query parameters of a request, one value per name (query-params.ts). */
type Params = Readonly<Record<string, string>>;

/**
 * A document route in two halves: `read`, what the route makes of its query parameters (pure: site-documents.ts
 * keeps its answer, or its AppError, per query string), and `reply`, the document for the request.
 */
export interface DocumentRoute<Q> {
  read(params: Params): Q;
  reply(request: Request, query: Q, params: Params): Response | Promise<Response>;
}

export function releaseDocuments(deps: ReleaseDocumentsDeps): { latest: DocumentRoute<LatestQuery>; manifest: DocumentRoute<null> } {
  const { offered } = deps.releases;
  const reportedVersion = (clientId: string) => deps.stores.clients.reportedVersion(clientId).catch(() => null);
  const documents = new DocumentCache(() => deps.changes.version("releases"));
  /** The key of the unfiltered document per base URL, made once: a key built per request is hashed per request. */
  const unfiltered = new Map<string, string>();
  const latestKey = (baseUrl: string, q: LatestQuery): string => {
    if (isFilteredQuery(q)) return `latest\n${baseUrl}\n${q.platform ?? ""}\n${q.arch ?? ""}\n${q.fileType ?? ""}`;
    let key = unfiltered.get(baseUrl);
    if (key === undefined) {
      key = `latest\n${baseUrl}\n\n\n`;
      if (unfiltered.size >= 256) unfiltered.clear();
      unfiltered.set(baseUrl, key);
    }
    return key;
  };
  return {
    /**
     * Decision: with no release published yet the answer is 200 with an empty document (version "", no
     * assets): clients still need the heartbeat settings, and "nothing to update to" is not an error.
     * Pre-releases are never offered here.
     */
    latest: {
      read: parseLatestQuery,
      reply(request, q, params) {
        const baseUrl = publicBaseUrl(request, deps.config);
        const variants = documents.getValue(latestKey(baseUrl, q), async () => {
          const ctx = { baseUrl, heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS, onlineWindowSeconds: ONLINE_WINDOW_SECONDS };
          const releases = await offered();
          // Advertised only when it answers every client (a web zip offered outside any rollout group): a client
          // in a group might get one where others get 404, and a document must not point at a 404.
          const manifestServed = planLegacyManifest(releases).base !== null;
          return renderVariants(planLatest(releases, q), (r) => buildLatestDocument(r, q, ctx, manifestServed));
        });
        return whenReady(variants, (v) => clientReply(request, params, v, reportedVersion));
      },
    },
    /**
     * Decision: with no downloadable web-*.zip in any (non pre-)release the answer is 404 with the error
     * envelope, still marked `no-cache` so the first published bundle is seen at once. A missing manifest
     * is what the earlier static site answered, and an updater treats it as "no update available".
     */
    manifest: {
      read: () => null,
      reply(request, _none, params) {
        const baseUrl = publicBaseUrl(request, deps.config);
        const variants = documents.getValue(`manifest\n${baseUrl}`, async () =>
          renderVariants(planLegacyManifest(await offered()), (r) => buildLegacyManifestOf(r, { baseUrl })),
        );
        return whenReady(variants, (v) => {
          const m = v.staged.length === 0 ? v.base : pickRendered(v, clientIdOf(request, params), reportedVersion);
          return m instanceof Promise ? m.then((chosen) => manifestReply(request, v, chosen)) : manifestReply(request, v, m);
        });
      },
    },
  };
}

/** The legacy manifest reply for the variant chosen: a 404 while no web bundle is offered to this client. */
function manifestReply(request: Request, v: RenderedVariants, m: RenderedDocument): Response {
  const vary = v.staged.length > 0 ? CLIENT_ID_HEADER_NAME : undefined;
  if (m.empty) {
    const res = errorResponse(new AppError("not_found", "No web bundle (web-*.zip) has been published yet."), {
      "cache-control": DOCUMENT_CACHE_CONTROL,
      ...corsOf(request),
    });
    if (vary) res.headers.append("vary", vary);
    return res;
  }
  return documentReply(request, m, vary);
}

const CLIENT_ID_HEADER_NAME = "X-App-Client-ID";

/** The client's id: the X-App-Client-ID header, else the `client_id` query parameter; malformed = none. */
function clientIdOf(request: Request, params: Params): string | null {
  const header = request.headers.get(CLIENT_ID_HEADER_NAME);
  if (header !== null && header.trim() !== "") return rolloutClientId(header);
  return rolloutClientId(readParam(params, "client_id"));
}

/** The document for this client (document-variants.ts), varying with X-App-Client-ID while a rollout is in progress. */
function clientReply(request: Request, params: Params, v: RenderedVariants, reportedVersion: ReportedVersion): Response | Promise<Response> {
  // The common case (no rollout in progress) allocates nothing: this is /api/v1/latest's hot path.
  if (v.staged.length === 0) return documentReply(request, v.base);
  return variantReply(request, v, () => clientIdOf(request, params), CLIENT_ID_HEADER_NAME, reportedVersion);
}
