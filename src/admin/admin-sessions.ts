/**
 * Back-office sessions, in memory: a random 256-bit id in an HttpOnly cookie (never the admin token), a
 * synchronizer CSRF token per session, an idle and an absolute expiry. Ids are kept as their SHA-256, so a
 * heap dump holds no usable cookie. A restart signs everyone out, which suits a single-binary back office.
 *
 * A session remembers which admin token signed it in: when the token is rotated (`gantry admin reset-token`)
 * every session made with the old one stops working at once.
 *
 * `AdminSessionStore` (admin-session-store.ts) is the seam; `InMemoryAdminSessions` the embedded default, and
 * store/redis/admin-sessions.ts the one several instances share.
 */
import { randomToken, sha256Hex } from "../secrets";
import { DEFAULT_SESSIONS, type AdminSession, type AdminSessionStore, type SessionOptions } from "./admin-session-store";

export { DEFAULT_SESSIONS, type AdminSession, type AdminSessionStore, type SessionOptions } from "./admin-session-store";

export class InMemoryAdminSessions implements AdminSessionStore {
  private readonly sessions = new Map<string, AdminSession>();
  private readonly options: SessionOptions;

  constructor(
    private readonly now: () => number,
    options: Partial<SessionOptions> = {},
  ) {
    this.options = { ...DEFAULT_SESSIONS, ...options };
  }

  async create(tokenFingerprint: string): Promise<{ id: string; session: AdminSession }> {
    const id = randomToken(32);
    const now = this.now();
    const session = { csrf: randomToken(32), createdAt: now, lastSeen: now, tokenFingerprint };
    this.sessions.set(sha256Hex(id), session);
    if (this.sessions.size > this.options.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return { id, session };
  }

  async get(id: string | null, tokenFingerprint: string | null): Promise<AdminSession | null> {
    if (!id || id.length > 100 || !tokenFingerprint) return null;
    const key = sha256Hex(id);
    const session = this.sessions.get(key);
    if (!session) return null;
    const now = this.now();
    const expired = now - session.lastSeen > this.options.idleMs || now - session.createdAt > this.options.maxAgeMs;
    if (expired || session.tokenFingerprint !== tokenFingerprint) {
      this.sessions.delete(key);
      return null;
    }
    session.lastSeen = now;
    return session;
  }

  async destroy(id: string | null): Promise<void> {
    if (id) this.sessions.delete(sha256Hex(id));
  }
}
