/**
 * Revalidation of the site's documents (/api/v1/latest, /update/latest.json, /api/v1/announcements), and of
 * /dl/ downloads by their SHA-256 ETag (`downloadNotModified`). Documents get
 * `Cache-Control: no-cache` (caches may store a reply but must ask us before using it), a strong ETag over the
 * exact body, 304 on a matching If-None-Match, 412 on an If-Match that does not match, and a Date (http-date.ts).
 */
import { AppError, errorResponse } from "../errors";
import { httpDate } from "../http/http-date";
import { corsOf } from "./cors";
import { downloadEtag } from "./downloads/download-headers";

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

/**
 * If-Match compared strongly (RFC 9110 §13.1.1): true when the header is absent or names our current tag
 * (or `*`). A client that makes its use conditional on the version it holds learns with a 412 that it changed.
 */
export function ifMatchHolds(header: string | null, etag: string): boolean {
  if (header === null) return true;
  for (const raw of header.split(",")) {
    const tag = raw.trim();
    if (tag === "*" || tag === etag) return true;
  }
  return false;
}

/** 412 with the envelope; carries the current tag so the client can fetch it. */
function preconditionFailed(headers: Record<string, string>): Response {
  const err = new AppError("precondition_failed", "If-Match does not name the current version of this document.", { param: "If-Match" });
  return errorResponse(err, headers);
}

/** The JSON reply, or a 304 when the client's copy is current. */
export function revalidatedJson(request: Request, value: unknown, status = 200): Response {
  const body = JSON.stringify(value);
  return revalidatedBody(request, body, documentEtag(body), status);
}

/** The same for a document already serialised (and tagged), e.g. from a cache. */
export function revalidatedBody(request: Request, body: string, etag: string, status = 200): Response {
  const cors = corsOf(request);
  // Dated here, not by Bun: a HEAD of the same document is dated by the same clock (http-date.ts says why).
  const date = httpDate();
  const headers = cors ? { "cache-control": DOCUMENT_CACHE_CONTROL, etag, date, ...cors } : { "cache-control": DOCUMENT_CACHE_CONTROL, etag, date };
  if (status === 200 && !ifMatchHolds(request.headers.get("if-match"), etag)) return preconditionFailed(headers);
  if (status === 200 && ifNoneMatchHits(request.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { status, headers: { ...headers, "content-type": "application/json" } });
}

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
