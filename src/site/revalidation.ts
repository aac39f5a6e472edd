/**
 * Revalidation of the site's documents (/api/v1/latest, /update/latest.json, /api/v1/announcements):
 * `Cache-Control: no-cache` (caches may store a reply but must ask us before using it), a strong ETag over the
 * exact body, and 304 on a matching If-None-Match. Pure.
 */

/** Every cache must ask us before reusing a copy, so no client keeps an old version (spec). */
export const DOCUMENT_CACHE_CONTROL = "no-cache";

/** Strong ETag over the body bytes: the same document always yields the same tag. */
export function documentEtag(body: string): string {
  const hex = new Bun.CryptoHasher("sha256").update(body).digest("hex");
  return `"${hex.slice(0, 32)}"`;
}

/**
 * If-None-Match compared weakly (RFC 9110 §13.1.2 says so for this header): CDNs such as Cloudflare turn
 * strong tags weak (`W/"…"`) when they recompress, and the revalidation must still succeed.
 */
export function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const ours = opaque(etag);
  for (const raw of header.split(",")) {
    const tag = raw.trim();
    if (tag === "*") return true;
    if (tag && opaque(tag) === ours) return true;
  }
  return false;
}

function opaque(tag: string): string {
  return tag.replace(/^W\//i, "");
}

/** The JSON reply, or a 304 when the client's copy is current. */
export function revalidatedJson(request: Request, value: unknown, status = 200): Response {
  const body = JSON.stringify(value);
  return revalidatedBody(request, body, documentEtag(body), status);
}

/** The same for a document already serialised (and tagged), e.g. from a cache. */
export function revalidatedBody(request: Request, body: string, etag: string, status = 200): Response {
  const headers = { "cache-control": DOCUMENT_CACHE_CONTROL, etag };
  if (status === 200 && ifNoneMatchHits(request.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { status, headers: { ...headers, "content-type": "application/json" } });
}
