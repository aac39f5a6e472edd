/**
 * A request must name one host. Bun joins repeated `Host` headers into one value ("a.example, b.example") while
 * the URL it builds takes the first: two parts of Gantry (and a proxy or cache in front of it) could then each
 * read a different host, which is how cache poisoning and routing confusion start. RFC 9112 §3.2 says a server
 * must answer 400 to more than one Host line, and no host name or address contains a comma, so one is enough to
 * tell.
 */
import { AppError, errorResponse } from "../errors";

/** The 400 for a request whose Host header was sent more than once (or holds a list); null when it is one host. */
export function repeatedHostRefusal(request: Request): Response | null {
  const host = request.headers.get("host");
  if (host === null || !host.includes(",")) return null;
  return errorResponse(new AppError("invalid_request", "The request has more than one Host header."));
}
