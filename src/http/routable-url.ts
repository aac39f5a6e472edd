/**
 * Elysia finds a request's path by skipping the first 11 characters of its URL (its `standardHostname`
 * optimisation, "http://a.bc"): with a Host of 1-3 characters (`Host: gw`, an intranet name without a port)
 * the path it sees is cut wrong, so `/api/v1/latest` answers 404 and `/v1/responses` is routed as
 * `/responses`. Turning the optimisation off breaks https URLs instead (it then skips 7). So a request with
 * such a short host gets the listener's own address in its URL; its Host header, which generated links
 * read, stays as sent, and so do its body, headers and abort signal.
 */
export function routableRequest(request: Request, listener: { hostname?: string; port?: number }): Request {
  const url = request.url;
  const hostEnd = url.indexOf("/", url.indexOf("://") + 3);
  if (hostEnd < 0 || hostEnd >= 11) return request;
  const scheme = url.slice(0, url.indexOf("://"));
  const host = listener.hostname?.includes(":") ? `[${listener.hostname}]` : (listener.hostname ?? "localhost");
  return new Request(`${scheme}://${host}:${listener.port ?? 80}${url.slice(hostEnd)}`, request);
}
