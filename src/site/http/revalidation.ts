/**
 * Revalidation of the site's documents (/api/v1/latest, /update/latest.json, /api/v1/announcements); the same
 * If-None-Match rule serves /dl/ downloads (downloads/download-revalidation.ts). Documents get
 * `Cache-Control: no-cache` (caches may store a reply but must ask us before using it), a strong ETag over the
 * exact body, 304 on a matching If-None-Match, 412 on an If-Match that does not match, and a Date (http-date.ts).
 */
import { AppError, errorResponse } from "../../errors";
import { httpDate } from "../../http/http-date";
import { corsOf } from "./cors";

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

/** The headers of a document reply (200, 304 and 412 alike; the 200 adds its content type). */
function documentHeaders(etag: string, date: string, cors: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return cors ? { "cache-control": DOCUMENT_CACHE_CONTROL, etag, date, ...cors } : { "cache-control": DOCUMENT_CACHE_CONTROL, etag, date };
}

/** The same for a document already serialised (and tagged). */
export function revalidatedBody(request: Request, body: string, etag: string, status = 200): Response {
  // Dated here, not by Bun: a HEAD of the same document is dated by the same clock (http-date.ts says why).
  const headers = documentHeaders(etag, httpDate(), corsOf(request));
  if (status === 200 && !ifMatchHolds(request.headers.get("if-match"), etag)) return preconditionFailed(headers);
  if (status === 200 && ifNoneMatchHits(request.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { status, headers: { ...headers, "content-type": "application/json" } });
}

/**
 * The headers of one cached document's replies, made once per second (the Date), CORS choice and Vary, not per
 * request: a Response copies a Headers object at a third of the cost of building one from a plain object.
 */
interface ReplyHeaders {
  date: string;
  cors: Readonly<Record<string, string>> | undefined;
  vary: string | undefined;
  ok: Headers;
  notModified: Headers;
}

const replyHeaders = new WeakMap<object, ReplyHeaders>();

function replyHeadersOf(doc: { etag: string; contentType?: string }, cors: ReplyHeaders["cors"], vary: string | undefined): ReplyHeaders {
  const date = httpDate();
  let h = replyHeaders.get(doc);
  if (h !== undefined && h.date === date && h.cors === cors && h.vary === vary) return h;
  const notModified = new Headers(documentHeaders(doc.etag, date, cors));
  if (vary !== undefined) notModified.append("vary", vary);
  const ok = new Headers(notModified);
  ok.set("content-type", doc.contentType ?? "application/json");
  h = { date, cors, vary, ok, notModified };
  replyHeaders.set(doc, h);
  return h;
}

/**
 * What revalidatedBody answers, for a document kept by the document cache (its headers are made once, see
 * ReplyHeaders); `vary` names a request header the chosen document depended on (a staged rollout's client id).
 */
export function documentReply(request: Request, doc: { body: string; etag: string; contentType?: string }, vary?: string): Response {
  const h = replyHeadersOf(doc, corsOf(request), vary);
  if (!ifMatchHolds(request.headers.get("if-match"), doc.etag)) {
    const res = preconditionFailed(documentHeaders(doc.etag, h.date, h.cors));
    if (vary !== undefined) res.headers.append("vary", vary);
    return res;
  }
  if (ifNoneMatchHits(request.headers.get("if-none-match"), doc.etag)) return new Response(null, { status: 304, headers: h.notModified });
  return new Response(doc.body, { headers: h.ok });
}
