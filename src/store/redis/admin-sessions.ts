/**
 * Back-office sessions in Redis (with GANTRY_REDIS_URL), so a browser signed in through one instance is signed
 * in on all of them behind a load balancer. Same rules as the in-process store: the key is the SHA-256 of the
 * cookie value (Redis never holds a usable cookie), expiry is judged with the injected clock, and a session made
 * with another admin token is refused and removed. Redis's own expiry only collects sessions nobody uses again.
 * Plain GET/SET/DEL on a client of its own: no MULTI on a shared connection.
 */
import { RedisClient } from "bun";
import { RedisScripts } from "./redis-scripts";
import { DEFAULT_SESSIONS, type AdminSession, type AdminSessionStore, type SessionOptions } from "../../admin/admin-session-store";
import { randomToken, sha256Hex } from "../../secrets";

const PREFIX = "gantry:session:";
/** Kept this long past the session's own end, so clock skew between instances never cuts one short. */
const GRACE_MS = 60_000;

export class RedisAdminSessions implements AdminSessionStore {
  private readonly client: RedisClient;
  private readonly options: SessionOptions;

  constructor(
    url: string,
    private readonly now: () => number,
    options: Partial<SessionOptions> = {},
  ) {
    this.client = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: 2000, autoReconnect: true, maxRetries: 3 });
    this.connection = new RedisScripts(this.client);
    this.options = { ...DEFAULT_SESSIONS, ...options };
  }

  private readonly connection: RedisScripts;

  /** Fails fast while Redis is down (no offline queue); connects again on the next call after it is back. */
  private async send(command: string, args: string[]): Promise<unknown> {
    await this.connection.connected();
    return this.client.send(command, args);
  }

  private async save(key: string, session: AdminSession): Promise<void> {
    const ends = Math.min(session.lastSeen + this.options.idleMs, session.createdAt + this.options.maxAgeMs);
    const ttl = Math.max(1, ends - this.now()) + GRACE_MS;
    await this.send("SET", [key, JSON.stringify(session), "PX", String(Math.ceil(ttl))]);
  }

  async create(tokenFingerprint: string): Promise<{ id: string; session: AdminSession }> {
    const id = randomToken(32);
    const now = this.now();
    const session = { csrf: randomToken(32), createdAt: now, lastSeen: now, tokenFingerprint };
    await this.save(PREFIX + sha256Hex(id), session);
    return { id, session };
  }

  async get(id: string | null, tokenFingerprint: string | null): Promise<AdminSession | null> {
    if (!id || id.length > 100 || !tokenFingerprint) return null;
    const key = PREFIX + sha256Hex(id);
    const raw = (await this.send("GET", [key])) as string | null;
    if (!raw) return null;
    const session = JSON.parse(raw) as AdminSession;
    const now = this.now();
    const expired = now - session.lastSeen > this.options.idleMs || now - session.createdAt > this.options.maxAgeMs;
    if (expired || session.tokenFingerprint !== tokenFingerprint) {
      await this.send("DEL", [key]);
      return null;
    }
    session.lastSeen = now;
    await this.save(key, session);
    return session;
  }

  async destroy(id: string | null): Promise<void> {
    if (id && id.length <= 100) await this.send("DEL", [PREFIX + sha256Hex(id)]);
  }

  close(): void {
    this.client.close();
  }
}
