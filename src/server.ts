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

/** Routes whose replies may stay silent for long (streams, and stream:false calls waiting on the upstream). */
function isLongLived(pathname: string): boolean {
  return pathname.endsWith("/responses") || pathname.endsWith("/chat/completions") || pathname.startsWith("/dl/");
}

export function startServer(deps: AppDeps, options: { hostname: string; port: number }): RunningServer {
  const app = createApp(deps);
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    // Our own limit answers with the error envelope; Bun's is only a backstop above it.
    maxRequestBodySize: deps.config.maxBodyBytes + 1024 * 1024,
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
