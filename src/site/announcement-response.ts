/**
 * Revalidation of GET /api/v1/announcements, as for /api/v1/latest: `Cache-Control: no-cache` (caches may
 * store the reply but must ask us before using it), a strong ETag over the exact body, and 304 when
 * If-None-Match matches. The comparison is weak (a `W/` prefix is tolerated) because CDNs that recompress,
 * Cloudflare among them, turn our strong ETags weak before browsers send them back.
 */

/** Strong validator: a hash of the bytes sent, so any change of the document changes it. */
export function etagOf(body: string): string {
  return `"${new Bun.CryptoHasher("sha256").update(body).digest("base64url").slice(0, 32)}"`;
}

function opaque(tag: string): string {
  const t = tag.trim();
  return t.startsWith("W/") ? t.slice(2) : t;
}

/** RFC 9110 If-None-Match: `*` or a comma-separated list of entity tags, compared weakly. */
export function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === "*") return true;
  const want = opaque(etag);
  return header.split(",").some((t) => opaque(t) === want);
}

/** A JSON reply with the revalidation headers, or a bodiless 304 carrying the same validators. */
export function revalidatedJson(request: Request, value: unknown): Response {
  const body = JSON.stringify(value);
  const etag = etagOf(body);
  const headers = { "cache-control": "no-cache", etag };
  if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { status: 200, headers: { ...headers, "content-type": "application/json; charset=utf-8" } });
}
