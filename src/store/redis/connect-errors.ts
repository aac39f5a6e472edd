/**
 * Why Redis could not be reached at start, said so an operator knows which part failed and what to check:
 * "Redis at cache.internal:6379: authentication failed (WRONGPASS)" instead of the driver's "connection closed".
 * Bun's client reports every failed connect() as "Connection closed", a wrong password included, so the reason
 * is found by asking again: one command on a client of its own (whose first reply carries the server's
 * WRONGPASS or NOAUTH), then a bare TCP connection (refused, or accepted but silent). Only the host and port of
 * the URL are named, never its user or password. Runs on a failed start only.
 */
import { RedisClient } from "bun";

/** `host:port` of a redis:// URL (6379 when it names none); the URL as given is never shown. */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || "6379"}`;
  } catch {
    return "the configured address";
  }
}

/** A refusal of the credentials: the server answered, so this is not a network fault. */
function authFailure(err: unknown): string | null {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const message = typeof e.message === "string" ? e.message : "";
  const word = /\b(WRONGPASS|NOAUTH)\b/.exec(message)?.[1];
  if (word === "NOAUTH") return "authentication failed (NOAUTH: the server wants a password and GANTRY_REDIS_URL gives none: redis://[user]:PASSWORD@host:port)";
  if (word === "WRONGPASS") return "authentication failed (WRONGPASS: check the user and password in GANTRY_REDIS_URL)";
  if (e.code === "ERR_REDIS_AUTHENTICATION_FAILED") return "authentication failed (check the user and password in GANTRY_REDIS_URL)";
  return null;
}

/** Whether anything accepts a TCP connection there: "refused", "open", or the socket error's code. */
async function tcpState(url: string, timeoutMs: number): Promise<string> {
  let hostname: string;
  let port: number;
  try {
    const u = new URL(url);
    hostname = u.hostname.replace(/^\[|\]$/g, "") || "localhost";
    port = Number(u.port || "6379");
  } catch {
    return "unknown";
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  const attempt = Bun.connect({ hostname, port, socket: { data() {}, open() {}, error() {} } }).then(
    (socket) => {
      socket.end();
      return "open";
    },
    (err: { code?: string }) => (err?.code === "ECONNREFUSED" ? "refused" : (err?.code ?? "unreachable")),
  );
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One command on a client of its own, whose failure says what the shared client's connect() did not. */
async function askOnce(url: string, timeoutMs: number): Promise<{ ok: true } | { ok: false; err: unknown; ms: number }> {
  const started = performance.now();
  const client = new RedisClient(url, { autoReconnect: false, connectionTimeout: timeoutMs });
  try {
    await client.send("PING", []);
    return { ok: true };
  } catch (err) {
    return { ok: false, err, ms: performance.now() - started };
  } finally {
    client.close();
  }
}

/** An error naming Redis's address and what went wrong, for a failed start. */
export async function redisConnectError(url: string, err: unknown, timeoutMs: number): Promise<Error> {
  const named = (why: string) => new Error(`Redis at ${redisAddress(url)}: ${why}`, { cause: err });
  const auth = authFailure(err);
  if (auth) return named(auth);
  const again = await askOnce(url, timeoutMs);
  if (again.ok) return named(`${(err as Error)?.message ?? String(err)} (it answers now: try again)`);
  const authAgain = authFailure(again.err);
  if (authAgain) return named(authAgain);
  const tcp = await tcpState(url, timeoutMs);
  if (tcp === "refused") return named("connection refused (is Redis running there, and listening on that address?)");
  if (tcp === "timeout") return named(`no answer within ${timeoutMs / 1000} s (nothing accepts connections there: a firewall, or a wrong address)`);
  if (tcp === "open") {
    return again.ms >= timeoutMs * 0.9
      ? named(`no answer within ${timeoutMs / 1000} s (the address takes connections but Redis does not answer: a wrong port, or a server that is stuck)`)
      : named("the connection was closed before Redis answered (a wrong port, or TLS required: rediss://)");
  }
  return named(`cannot connect (${tcp})`);
}
