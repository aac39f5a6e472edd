/**
 * A /dl/ download revalidated by its SHA-256 ETag, with the site's If-None-Match rule (site/http/revalidation.ts).
 */
import { ifNoneMatchHits } from "../http/revalidation";
import { downloadEtag } from "./rules/download-headers";

/**
 * 304 for a download the client already holds (If-None-Match names the SHA-256 ETag, weakly compared as for
 * the documents), else null. Decided before the token is spent or a download counted: revalidating is not
 * downloading. An asset whose digest is not known yet has no ETag and never matches.
 */
export function downloadNotModified(request: Request, sha256: string): Response | null {
  const etag = downloadEtag(sha256);
  if (etag === null || !ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return null;
  return new Response(null, { status: 304, headers: { etag, "cache-control": "private, no-store" } });
}
