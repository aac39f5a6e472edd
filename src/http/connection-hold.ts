/**
 * The idle cut of a request's connection, held off while a long reply runs and put back after it. Bun's idle
 * timeout counts only what the client sends, so a stream the server writes for minutes, a collected call waiting on
 * the upstream or a download would be cut mid-way; but switching it off for a path before anyone is authenticated
 * let any client hold a connection forever with a partial request (and the switch stayed off for the rest of the
 * kept-alive connection). So: every request starts with the cut on; a route holds it off only once the caller is
 * authenticated and admitted, and releases it when its reply ends.
 */

import { existingRequestState, requestState, type ConnectionHold } from "./request-state";

export type { ConnectionHold };

/** The shell records how to hold each request's connection (the app sees no server). */
export function recordConnectionHold(request: Request, hold: ConnectionHold): void {
  requestState(request).hold = hold;
}

export function holdConnection(request: Request): void {
  existingRequestState(request)?.hold?.hold();
}

export function releaseConnection(request: Request): void {
  existingRequestState(request)?.hold?.release();
}
