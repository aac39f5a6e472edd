/** Request ids: short, random, and accepted from a caller only when they look like ids (no log injection). */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A random prefix per process and a counter: unique across processes and restarts like a UUID, at a fraction of
 * its cost per request. Ids only correlate log lines and replies; nothing relies on them being unguessable.
 */
const PREFIX = "req_" + Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString("base64url");
let counter = 0;

export function newRequestId(): string {
  return PREFIX + (counter++).toString(36);
}

/** The caller's own X-Request-Id when it looks like an id (1-128 of A-Z a-z 0-9 . _ : -), else null. */
export function clientRequestIdOf(request: Request): string | null {
  const given = request.headers.get("x-request-id");
  return given && SAFE_ID.test(given) ? given : null;
}

/**
 * The id of a request that writes no ledger row (site, admin): the caller's when well-formed, else a new one. A
 * gateway call never takes the caller's as its own (GatewayCall.requestId is the ledger's unique id).
 */
export function requestIdFor(request: Request): string {
  return clientRequestIdOf(request) ?? newRequestId();
}
