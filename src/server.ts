/**
 * The thin shell around createApp: Bun.serve on the configured address, idle cuts held off only by admitted long replies,
 * HTTPS with certificate reloads, an optional plain-HTTP redirect listener, and a graceful stop (stop
 * accepting, let in-flight requests finish up to the grace period, flush, close).
 */
import { exactHeadReply } from "./http/head-reply";
import type { Server } from "bun";
import { readFileSync, statSync } from "node:fs";
import { createServing } from "./app";
import { nativeRouteTable, type NativeShell } from "./http/native-routes";
import { recordClientAddress } from "./http/client-address";
import { recordConnectionHold } from "./http/connection-hold";
import { badTargetResponse, pathnameOf, shellErrorResponse } from "./http/errors";
import { repeatedHostRefusal } from "./http/host-header";
import { routableRequest } from "./http/routable-url";
import { startConnectionCap } from "./http/connection-cap";
import { isTrustedPeer } from "./rules/ip-ranges";
import { raiseOpenFileLimit } from "./http/open-file-limit";
import { loadSocketShutdown } from "./http/socket-shutdown";
import type { AppDeps } from "./deps";

export interface RunningServer {
  readonly server: Server<undefined>;
  url: string;
  /** Re-reads the certificate and key; keeps serving the old ones if the new files are unusable. */
  reloadTls(): boolean;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Bun's own body limit is only a backstop: every route reads its body with its own bound (the gateway's is
 * GANTRY_MAX_BODY_BYTES), except release uploads, which stream into the mirror and may be installers of
 * several GiB. Unauthenticated requests to the admin API are refused before any body is read.
 */
const MAX_UPLOAD_BYTES = 8 * 1024 ** 3;
const TLS_WATCH_MS = 5000;

function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  } catch {
    return "missing";
  }
}

/** Some responses (e.g. a proxied fetch) have immutable headers: copy those before adding one. */
function withHeader(res: Response, name: string, value: string): Response {
  try {
    res.headers.set(name, value);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set(name, value);
    return copy;
  }
}

export function startServer(deps: AppDeps, options: { hostname: string; port: number }): RunningServer {
  const { app, native } = createServing(deps);
  const { config, log } = deps;
  const tls = config.tlsCert ? { cert: config.tlsCert, key: config.tlsKey } : null;
  const hsts = tls && config.hstsMaxAgeSeconds > 0 ? `max-age=${config.hstsMaxAgeSeconds}` : null;
  const trusted = config.trustedProxies;

  /** Every request, native route or not: the idle cut on, whatever the request before it on this connection did,
   *  and how to ask the socket for the peer's address (`original`: the request Bun gave, which it knows). */
  const prepare = (request: Request, original: Request, srv: Server<undefined>): Response | null => {
    srv.timeout(original, config.idleTimeoutSeconds);
    recordClientAddress(request, () => srv.requestIP(original)?.address, trusted);
    return repeatedHostRefusal(request);
  };
  /** Every reply: HEAD replies corrected on the way out (head-reply.ts), HSTS under TLS. */
  const finish = (method: string, res: Response): Response => {
    const exact = method === "HEAD" ? exactHeadReply(res) : res;
    return hsts ? withHeader(exact, "strict-transport-security", hsts) : exact;
  };
  const shell: NativeShell = {
    prepare: (request, srv) => prepare(request, request, srv),
    finish: (request, res) => finish(request.method, res),
  };
  // The public documents, served by Bun's router ahead of Elysia (native-routes.ts says why and what they keep).
  const routes = nativeRouteTable(native.routes, native.app, shell);

  const listen = (port: number) =>
    Bun.serve({
      hostname: options.hostname,
      port,
      // With TLS, a reload binds a second listener on the same port before the old one stops.
      reusePort: tls !== null,
      tls: tls ? { cert: readFileSync(tls.cert, "utf8"), key: readFileSync(tls.key, "utf8") } : undefined,
      maxRequestBodySize: Math.max(config.maxBodyBytes + 1024 * 1024, MAX_UPLOAD_BYTES),
      // Seconds a connection may send nothing; held off by routes with long replies (connection-hold.ts).
      idleTimeout: config.idleTimeoutSeconds,
      // Never Bun's own error page (in development mode it shows source lines): the envelope, always.
      error: (err) => shellErrorResponse(err, log),
      routes,
      fetch(request, srv) {
        const pathname = pathnameOf(request.url);
        if (pathname === null) return badTargetResponse();
        const original = request;
        request = routableRequest(request, srv);
        const refused = prepare(request, original, srv);
        if (refused) return refused;
        recordConnectionHold(request, { hold: () => srv.timeout(original, 0), release: () => srv.timeout(original, config.idleTimeoutSeconds) });
        const reply = app.handle(request);
        // GET and the rest without HSTS are left untouched (no extra promise).
        if (request.method !== "HEAD" && !hsts) return reply;
        const method = request.method;
        return reply.then((res) => finish(method, res));
      },
    });

  const files = raiseOpenFileLimit();
  let current = listen(options.port);
  const port = current.port!;
  const cap = capConnections(deps, port, current.hostname ?? "", files?.soft ?? null);
  if (files) log.info("open files", { limit: files.soft, hardLimit: files.hard, maxConnectionsPerAddress: config.maxConnectionsPerAddress });
  if (files?.error) log.warn("the open-file limit could not be raised to its hard limit", { limit: files.soft, hardLimit: files.hard, error: files.error });
  const host = current.hostname?.includes(":") ? `[${current.hostname}]` : current.hostname;
  const url = `${tls ? "https" : "http"}://${host}:${port}`;

  let stamps = tls ? [fileStamp(tls.cert), fileStamp(tls.key)].join("|") : "";
  const reloadTls = (): boolean => {
    if (!tls) return false;
    let next: Server<undefined>;
    try {
      next = listen(port);
    } catch (err) {
      log.error("TLS reload failed; still serving the previous certificate", { error: (err as Error).message });
      return false;
    }
    const old = current;
    current = next;
    void old.stop(false); // in-flight requests on the old listener finish; new connections get the new certificate
    log.info("TLS certificate reloaded", { cert: tls.cert });
    return true;
  };
  const watch = tls
    ? setInterval(() => {
        const now = [fileStamp(tls.cert), fileStamp(tls.key)].join("|");
        if (now === stamps) return;
        stamps = now;
        reloadTls();
      }, TLS_WATCH_MS)
    : null;
  (watch as { unref?: () => void } | null)?.unref?.();

  // Plain HTTP that only redirects: 308 keeps the method and body of a POST.
  const redirector =
    tls && config.httpRedirectPort
      ? Bun.serve({
          hostname: options.hostname,
          port: config.httpRedirectPort,
          error: (err) => shellErrorResponse(err, log),
          fetch(request) {
            // A redirect built from "a.example, b.example" would send the client who knows where.
            const refused = repeatedHostRefusal(request);
            if (refused) return refused;
            const u = new URL(request.url);
            const hostOnly = (request.headers.get("host") ?? u.host).replace(/:\d+$/, "");
            const base = config.publicUrl || `https://${hostOnly}${port === 443 ? "" : `:${port}`}`;
            return new Response(null, { status: 308, headers: { location: `${base}${u.pathname}${u.search}` } });
          },
        })
      : null;

  return {
    get server() {
      return current;
    },
    url,
    reloadTls,
    async stop(graceMs = config.shutdownGraceSeconds * 1000) {
      if (watch) clearInterval(watch);
      cap?.stop();
      redirector?.stop(true);
      const graceful = current.stop(false);
      const timedOut = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref?.()),
      ]);
      if (timedOut) await current.stop(true);
      await deps.close();
    },
  };
}

/** How often one address's cut connections are logged, at most. */
const CUT_LOG_EVERY_MS = 60_000;

/** GANTRY_MAX_CONNECTIONS_PER_ADDRESS kept on the listener (connection-cap.ts), or null when off or impossible here. */
function capConnections(deps: AppDeps, port: number, hostname: string, openFiles: number | null): { stop(): void } | null {
  const { config, log } = deps;
  const max = config.maxConnectionsPerAddress;
  if (max === 0) return null;
  const loaded = loadSocketShutdown();
  if ("error" in loaded) {
    log.warn("connections per address are not capped here: no way to end a connection", { error: loaded.error });
    return null;
  }
  if (openFiles !== null && openFiles < max * 4) {
    log.warn("the open-file limit is low for the per-address connection cap: a few addresses can take every descriptor", { limit: openFiles, maxConnectionsPerAddress: max });
  }
  const trusted = config.trustedProxies;
  const logged = new Map<string, number>();
  return startConnectionCap({
    port,
    // An IPv6 listener has its connections (mapped IPv4 ones too) in tcp6; a name may have resolved to either.
    tables: hostname.includes(":") ? ["tcp6"] : /^[\d.]+$/.test(hostname) ? ["tcp"] : ["tcp", "tcp6"],
    cap: max,
    exempt: (peer) => trusted.length > 0 && isTrustedPeer(peer, trusted),
    shutdown: loaded.shutdown,
    onCut: (address, held, cut) => {
      const now = Date.now();
      if (now - (logged.get(address) ?? 0) < CUT_LOG_EVERY_MS) return;
      if (logged.size > 10_000) logged.clear();
      logged.set(address, now);
      log.warn("an address holds more connections than allowed: its newest were closed", { address, held, closed: cut, maxConnectionsPerAddress: max });
    },
  });
}
