/**
 * The site's public documents (/api/v1/latest, /update/latest.json, /api/v1/announcements): the most requested
 * routes, each a plain function of the request with the site's conventions applied (CORS headers kept on the
 * request, repeated query parameters refused, the query read once). The site's Elysia routes (routes.ts) and
 * Bun's native route table (app.ts, server.ts) both call these functions, so there is one definition of each
 * route's behaviour; the native table serves them without Elysia's routing and hooks.
 */
import { AppError } from "../errors";
import { parseAnnouncementQuery } from "./announcements/rules/announcements";
import { SiteCors, keepCors } from "./http/cors";
import { whenReady } from "./http/document-cache";
import type { EngagementServices } from "./engagement-services";
import { queryParams } from "./http/rules/query-params";
import { releaseDocuments, type DocumentRoute, type ReleaseDocumentsDeps } from "./releases/release-documents";
import { documentReply } from "./http/revalidation";

export interface SiteDocument {
  /** The exact path, which is also the route template of the metrics and the log. */
  path: string;
  /** The reply to GET (HEAD: the same without its body). May throw an AppError; the caller renders it. */
  get(request: Request): Response | Promise<Response>;
}

export interface SiteDocuments {
  routes: readonly SiteDocument[];
  /** The site's CORS decisions (GANTRY_CORS_ORIGINS), shared with the other site routes. */
  cors: SiteCors;
}

export type SiteDocumentsDeps = ReleaseDocumentsDeps & {
  engagement: Pick<EngagementServices, "announcements">;
  config: ReleaseDocumentsDeps["config"] & { corsOrigins: readonly string[] };
};

/** Query strings whose reading is kept per route; clients choose them (a client_id each), so the map is bounded. */
const READ_ENTRIES = 256;

type Read<Q> = { params: Readonly<Record<string, string>>; query: Q } | AppError;

/**
 * A route's reading of a query string (parameters once each, then the route's own `read`), kept per query string:
 * both are pure, and clients repeat the same few queries (parsing a version and a locale cost more than the
 * rest of a cached announcement reply).
 */
function readingsOf<Q>(route: DocumentRoute<Q>): (queryString: string) => Read<Q> {
  const kept = new Map<string, Read<Q>>();
  return (queryString) => {
    let r = kept.get(queryString);
    if (r === undefined) {
      const params = queryParams(queryString);
      try {
        // Frozen: one reading serves many requests.
        r = params instanceof AppError ? params : { params, query: Object.freeze(route.read(params)) as Q };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        r = err;
      }
      if (kept.size >= READ_ENTRIES) kept.clear();
      kept.set(queryString, r);
    }
    return r;
  };
}

export function siteDocuments(deps: SiteDocumentsDeps): SiteDocuments {
  const cors = new SiteCors(deps.config.corsOrigins);
  const releases = releaseDocuments(deps);
  const { announcements } = deps.engagement;
  /** The site's conventions around a document route. */
  const document = <Q>(path: string, route: DocumentRoute<Q>): SiteDocument => {
    const readingOf = readingsOf(route);
    return {
      path,
      get(request) {
        const headers = cors.headersFor(request);
        keepCors(request, headers);
        const url = request.url;
        const q = url.indexOf("?");
        const read = readingOf(q === -1 ? "" : url.slice(q + 1));
        // A refused query (a parameter given twice, a value the route does not know) is thrown like the route's
        // other errors, and rendered with the CORS headers kept above.
        if (read instanceof AppError) throw read;
        return route.reply(request, read.query, read.params);
      },
    };
  };
  return {
    cors,
    routes: [
      document("/api/v1/latest", releases.latest),
      document("/update/latest.json", releases.manifest),
      document("/api/v1/announcements", {
        read: parseAnnouncementQuery,
        reply: (request, query) => whenReady(announcements.rendered(query), (d) => documentReply(request, d)),
      }),
    ],
  };
}
