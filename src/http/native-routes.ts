/**
 * Routes served from Bun's own route table (Bun.serve `routes`) instead of through Elysia: for the most requested
 * public documents, Elysia's routing, context and hooks cost more than the document itself. A native route calls
 * the same handler function as its Elysia route (which stays registered for app.handle, OpenAPI and the method
 * table), and keeps what the Elysia path gives every request: the server shell's per-request duties (idle cut,
 * peer address, HEAD made exact, HSTS), the request's metric and log line (request-log.ts), and errors rendered
 * as the app renders them. Only GET (and HEAD, which Bun answers from GET) is native; every other method, and
 * every other spelling of the path (a trailing slash), falls through to the fetch handler and Elysia.
 */
import type { Server } from "bun";
import type { RecordRequest } from "./request-log";

export interface NativeRoute {
  /** The exact path, also the route template the metric and the log line name. */
  path: string;
  /** The reply to GET; may throw (or reject), rendered by `NativeApp.fail`. */
  get(request: Request): Response | Promise<Response>;
}

/** What the app gives a native route: counting and logging, and its error rendering. */
export interface NativeApp {
  record: RecordRequest;
  /** The reply to an error the handler threw, as the app's error handler renders it. */
  fail(request: Request, error: unknown): Response;
}

/** What the server shell does around every request. */
export interface NativeShell {
  /** Before the handler: the idle cut put back, how to ask for the peer's address; a refusal, or null. */
  prepare(request: Request, server: Server<undefined>): Response | null;
  /** After it: the reply as the shell sends every reply (HEAD made exact, HSTS). */
  finish(request: Request, reply: Response): Response;
}

type NativeHandler = (request: Request, server: Server<undefined>) => Response | Promise<Response>;

export function nativeRouteTable(routes: readonly NativeRoute[], app: NativeApp, shell: NativeShell): Record<string, { GET: NativeHandler }> {
  const table: Record<string, { GET: NativeHandler }> = {};
  for (const route of routes) {
    const { path } = route;
    const done = (request: Request, reply: Response, start: number): Response => {
      app.record(request, path, reply.status, start);
      return shell.finish(request, reply);
    };
    table[path] = {
      GET(request, server) {
        const start = performance.now();
        const refused = shell.prepare(request, server);
        if (refused) return done(request, refused, start);
        let reply: Response | Promise<Response>;
        try {
          reply = route.get(request);
        } catch (err) {
          reply = app.fail(request, err);
        }
        // A cache hit answers synchronously: no promise on the hot path (document-cache.ts).
        if (!(reply instanceof Promise)) return done(request, reply, start);
        return reply.then(
          (res) => done(request, res, start),
          (err) => done(request, app.fail(request, err), start),
        );
      },
    };
  }
  return table;
}
