/**
 * The thin shell around createApp: Bun.serve on the configured address, no idle cut on gateway streams,
 * and a graceful stop (stop accepting, let in-flight requests finish up to the grace period, flush, close).
 */
import type { Server } from "bun";
import { createApp } from "./app";
import { recordClientAddress } from "./http/client-address";
import type { AppDeps } from "./deps";

export interface RunningServer {
  server: Server<undefined>;
  url: string;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Routes whose replies may stay silent for long: streams, stream:false calls waiting on the upstream,
 * downloads, and the back office's release operations (a sync answers when it has mirrored everything;
 * an upload of a large installer takes minutes).
 */
function isLongLived(pathname: string): boolean {
  return (
    pathname.endsWith("/responses") ||
    pathname.endsWith("/chat/completions") ||
    pathname.startsWith("/dl/") ||
    pathname.startsWith("/admin/api/releases")
  );
}

/**
 * Bun's own body limit is only a backstop: every route reads its body with its own bound (the gateway's is
 * GANTRY_MAX_BODY_BYTES), except release uploads, which stream into the mirror and may be installers of
 * several GiB. Unauthenticated requests to the admin API are refused before any body is read.
 */
const MAX_UPLOAD_BYTES = 8 * 1024 ** 3;

export function startServer(deps: AppDeps, options: { hostname: string; port: number }): RunningServer {
  const app = createApp(deps);
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    maxRequestBodySize: Math.max(deps.config.maxBodyBytes + 1024 * 1024, MAX_UPLOAD_BYTES),
    idleTimeout: 60,
    fetch(request, srv) {
      const { pathname } = new URL(request.url);
      if (isLongLived(pathname)) srv.timeout(request, 0);
      recordClientAddress(request, srv.requestIP(request)?.address);
      return app.handle(request);
    },
  });
  const url = `http://${server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`;
  return {
    server,
    url,
    async stop(graceMs = deps.config.shutdownGraceSeconds * 1000) {
      const graceful = server.stop(false);
      const timedOut = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref?.()),
      ]);
      if (timedOut) await server.stop(true);
      deps.close();
    },
  };
}
