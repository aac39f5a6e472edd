/** The credential of an `Authorization: Bearer <token>` header (RFC 6750), shared by the gateway and the admin API. */
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const m = BEARER.exec(header);
  return m ? m[1] : null;
}
