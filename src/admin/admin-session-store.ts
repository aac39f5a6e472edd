/**
 * The port of back-office sessions: what a session is and what a store of them must do (promises, so a shared
 * store can hold the sessions of several instances). Implementations: admin/admin-sessions.ts (in process),
 * store/redis/admin-sessions.ts (Redis).
 */
export interface AdminSession {
  csrf: string;
  createdAt: number;
  lastSeen: number;
  tokenFingerprint: string;
}

export interface SessionOptions {
  idleMs: number;
  maxAgeMs: number;
  maxSessions: number;
}

export const DEFAULT_SESSIONS: SessionOptions = { idleMs: 2 * 3_600_000, maxAgeMs: 12 * 3_600_000, maxSessions: 1000 };

export interface AdminSessionStore {
  create(tokenFingerprint: string): Promise<{ id: string; session: AdminSession }>;
  /** The live session of a cookie value (and marks it used), or null when unknown, expired or made with another token. */
  get(id: string | null, tokenFingerprint: string | null): Promise<AdminSession | null>;
  destroy(id: string | null): Promise<void>;
}
