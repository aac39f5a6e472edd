/**
 * Makes a HEAD reply exact before it leaves (RFC 9110 §9.3.2, §8.6, §6.6.1). Two components get it wrong:
 * Elysia answers HEAD on a GET route by running the GET handler and setting Content-Length to the length of the
 * body it got, which is 0 for a 304 — and a cache (squid) then stores that zero as the document's length and
 * serves later clients an empty 200; and Bun sends no Date header on a HEAD reply. Only HEAD pays for this.
 */

import { httpDate } from "./http-date";

/** The reply to a HEAD request, corrected in place (or copied when its headers are immutable, e.g. a fetch). */
export function exactHeadReply(res: Response): Response {
  const fixLength = res.status === 304 && res.headers.get("content-length") === "0";
  const fixDate = !res.headers.has("date");
  if (!fixLength && !fixDate) return res;
  let out = res;
  try {
    apply(out.headers, fixLength, fixDate);
  } catch {
    out = new Response(null, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
    apply(out.headers, fixLength, fixDate);
  }
  return out;
}

function apply(headers: Headers, fixLength: boolean, fixDate: boolean): void {
  // A 304 carries the 200's length or none; a zero would tell a cache the document is empty.
  if (fixLength) headers.delete("content-length");
  if (fixDate) headers.set("date", httpDate());
}
