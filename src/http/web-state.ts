/**
 * Browser-facing state of one app instance: admin sessions and the failure throttles of the admin credential
 * and of the portal. Per app (not per process), so tests and a second app never share lockouts. The sessions are
 * the admin feature's (admin/admin-session-store.ts, the port, and its implementations); the composition hands them
 * in, and this module knows of them only what the guard and the sign-in need.
 */
import type { AdminAuth } from "./admin-auth";
import { readCookie } from "./cookies";
import { requestState } from "./request-state";
import { FailureThrottle } from "./throttle";

/** Over HTTPS the `__Host-` prefix makes the browser refuse the cookie unless it is Secure, host-only and Path=/. */
export const SESSION_COOKIE = "gantry_admin";
export const SECURE_SESSION_COOKIE = "__Host-gantry_admin";

/** What the guard reads of a signed-in session: its CSRF token. */
export interface GuardedSession {
  csrf: string;
}

/** The session store as the guard and the sign-in use it (admin/admin-session-store.ts satisfies it). */
export interface SessionStore<S extends GuardedSession = GuardedSession> {
  create(tokenFingerprint: string): Promise<{ id: string; session: S }>;
  get(id: string | null, tokenFingerprint: string | null): Promise<S | null>;
  destroy(id: string | null): Promise<void>;
}

export interface WebState {
  sessions: SessionStore;
  /** Failed admin credentials: sign-in form, bearer token on /admin/api and /metrics. */
  adminThrottle: FailureThrottle;
  /** Failed keys on the portal. */
  portalThrottle: FailureThrottle;
  /** The live session of a request's cookie, or null (looked up once per request, then remembered). */
  sessionOf(request: Request): Promise<GuardedSession | null>;
  /** The raw cookie value (for sign-out). */
  sessionIdOf(request: Request): string | null;
}

/** `sessions`: a shared store (Redis, for several instances) or the in-process one. */
export function createWebState(deps: { now: () => number; adminAuth: AdminAuth; sessions: SessionStore }): WebState {
  const sessions = deps.sessions;
  const sessionIdOf = (request: Request) => {
    const header = request.headers.get("cookie");
    return readCookie(header, SECURE_SESSION_COOKIE) ?? readCookie(header, SESSION_COOKIE);
  };
  const webState: WebState = {
    sessions,
    adminThrottle: new FailureThrottle(deps.now),
    portalThrottle: new FailureThrottle(deps.now),
    sessionIdOf,
    sessionOf(request) {
      const state = requestState(request);
      if (state.session?.owner !== webState) {
        const session = deps.adminAuth.fingerprint().then((fingerprint) => sessions.get(sessionIdOf(request), fingerprint));
        state.session = { owner: webState, session };
      }
      return state.session.session as Promise<GuardedSession | null>;
    },
  };
  return webState;
}
