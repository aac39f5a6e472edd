/**
 * Why PostgreSQL could not be reached, said so an operator knows which part failed and what to check:
 * "PostgreSQL at db.internal:5432: connection refused" instead of the driver's "failed to connect". Only the
 * host and port of the URL are named, never its user or password.
 */

/** `host:port` of a postgres:// URL (5432 when it names none); the URL as given is never shown. */
export function postgresAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || "5432"}`;
  } catch {
    return "the configured address";
  }
}

/** The driver's error, in words: the reason alone, without the URL. */
function reason(err: unknown, connectTimeoutSeconds: number): string {
  const e = (err ?? {}) as { code?: unknown; errno?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  const errno = typeof e.errno === "string" ? e.errno : "";
  const message = typeof e.message === "string" ? e.message : String(err);
  if (code === "ERR_POSTGRES_CONNECTION_REFUSED") return "connection refused (is PostgreSQL running there, and listening on that address?)";
  if (code === "ERR_POSTGRES_CONNECTION_TIMEOUT") return `no answer within ${connectTimeoutSeconds} s (the address takes connections but PostgreSQL does not answer: a firewall, a wrong port, or a server that is stuck)`;
  if (code === "ERR_POSTGRES_CONNECTION_CLOSED") return "the connection was closed before PostgreSQL answered (a wrong port, or TLS required: add ?sslmode=require)";
  // 28P01 invalid_password, 28000 invalid_authorization_specification: not a network fault.
  if (errno === "28P01" || errno === "28000" || /^ERR_POSTGRES_.*(AUTH|PASSWORD|SASL)/.test(code)) return `authentication failed (${message})`;
  if (errno === "3D000") return `${message} (create it first, or fix the database name in the URL)`;
  return message;
}

/** An error naming the server and what went wrong, for a failed start or command. */
export function postgresConnectError(url: string, err: unknown, connectTimeoutSeconds: number): Error {
  return new Error(`PostgreSQL at ${postgresAddress(url)}: ${reason(err, connectTimeoutSeconds)}`, { cause: err });
}
