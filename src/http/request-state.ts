/**
 * What Gantry keeps about one request while it runs, beside the Request object: the shell records how to reach the
 * socket, the request log its start and id, the access guard the admin session, the site its CORS choice. One
 * typed record per request in one WeakMap, so a request costs one lookup per reader, whatever channels it uses,
 * and a new channel is a field here rather than another map or a property hidden on the Request.
 *
 * Gone with the Request: nothing here outlives it.
 */

/** The idle cut of a request's connection (connection-hold.ts). */
export interface ConnectionHold {
  /** No idle cut while the reply runs. */
  hold(): void;
  /** The idle cut again (the reply is over; the kept-alive connection waits for a next request). */
  release(): void;
}

/** How to ask the socket for its peer, and the answers once asked (client-address.ts). */
export interface PeerState {
  lookup: () => string | undefined;
  trusted: readonly string[];
  peer?: string;
  client?: string;
}

export interface RequestState {
  /** performance.now() when the request reached the app (request-log.ts), or when its state was made. */
  start: number;
  /** The request id, once made (request-log.ts). */
  requestId?: string;
  /** Recorded by the server shell; absent for requests handed to the app directly (tests). */
  peer?: PeerState;
  /** Recorded by the server shell; absent for requests handed to the app directly (tests). */
  hold?: ConnectionHold;
  /** The admin session of the request's cookie, looked up once, and whose lookup it was (one web state per app). */
  session?: { owner: object; session: Promise<unknown> };
  /** The CORS headers chosen for a site request (site/cors.ts); undefined off the CORS paths. */
  cors?: Readonly<Record<string, string>>;
}

const states = new WeakMap<Request, RequestState>();

/** The request's state, made on first use. */
export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (state === undefined) states.set(request, (state = { start: performance.now() }));
  return state;
}

/** The request's state if anything recorded one (readers that have a default need not make one). */
export function existingRequestState(request: Request): RequestState | undefined {
  return states.get(request);
}
