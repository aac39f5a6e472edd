/** Request ids: short, random, and accepted from a caller only when they look like ids (no log injection). */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function newRequestId(): string {
  return "req_" + crypto.randomUUID().replaceAll("-", "");
}

export function requestIdFor(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given && SAFE_ID.test(given) ? given : newRequestId();
}
