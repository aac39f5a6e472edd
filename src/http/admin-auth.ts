/**
 * The admin token: from GANTRY_ADMIN_TOKEN when set, otherwise generated on first start, printed once and
 * kept only as its SHA-256. Compared in constant time.
 */
import { hashesEqual, newAdminToken, sha256Hex } from "../secrets";
import type { MetaRepository } from "../state/meta-repository";
import { bearerToken } from "./bearer";

const HASH_KEY = "admin_token_sha256";

export class AdminAuth {
  /** Set when the token comes from the settings; otherwise the stored hash is read at each check, so a
   *  token rotated by the CLI works on a running server at once (admin calls are rare: no cache needed). */
  private readonly configuredHash: string | null;

  constructor(
    private readonly meta: MetaRepository,
    configuredToken: string,
  ) {
    this.configuredHash = configuredToken ? sha256Hex(configuredToken) : null;
  }

  private async hash(): Promise<string | null> {
    return this.configuredHash ?? (await this.meta.get(HASH_KEY));
  }

  /** On first start without a configured token: makes one and returns it, to be printed once. */
  async ensureToken(): Promise<string | null> {
    if (await this.hash()) return null;
    const token = newAdminToken();
    return (await this.meta.setIfAbsent(HASH_KEY, sha256Hex(token))) ? token : null;
  }

  /** Replaces the stored token (e.g. `gantry admin reset-token`); returns the new one. */
  async rotate(): Promise<string> {
    const token = newAdminToken();
    await this.meta.set(HASH_KEY, sha256Hex(token));
    return token;
  }

  /** Identifies the current token (its hash) without revealing it: sessions remember which token made them. */
  fingerprint(): Promise<string | null> {
    return this.hash();
  }

  async verifyToken(token: string | null): Promise<boolean> {
    const hash = await this.hash();
    if (!token || !hash) return false;
    return hashesEqual(sha256Hex(token), hash);
  }

  /** The hash of this process's local operator token (see allowLocalOperator), or null. */
  private operatorHash: string | null = null;

  /**
   * Accepts `token` as a bearer on the admin API as well, for this process's life: the running server writes it to
   * a file in its data dir only its owner can read, so the CLI on that machine (`gantry upstreams`) can ask the
   * server what only the server's process knows. Not accepted at the back office's sign-in.
   */
  allowLocalOperator(token: string): void {
    this.operatorHash = sha256Hex(token);
  }

  async verifyHeader(authorization: string | null): Promise<boolean> {
    const token = bearerToken(authorization);
    if (token && this.operatorHash && hashesEqual(sha256Hex(token), this.operatorHash)) return true;
    return this.verifyToken(token);
  }
}
