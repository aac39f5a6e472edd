/**
 * The server's view of API keys: loaded once, looked up by the SHA-256 of the presented secret with no SQL per
 * request, and reloaded when the keys generation in the database moves (checked twice a second, so a change
 * made by the CLI in another process takes effect within one second).
 */
import type { ApiKey, KeyStore, KeyUsageTotals } from "../../store/sqlite/keys";
import { digestsEqual, sha256Bytes } from "../../secrets";
import { compileModelPermission, type ModelMatcher } from "../limits/model-match";

export interface CachedKey {
  key: ApiKey;
  /** The stored SHA-256 of the secret, decoded once. */
  digest: Uint8Array;
  allowsModel: ModelMatcher;
  /** The totals the database recorded at the last reload; the limiter counts from them (see RecordedUsage). */
  usage: KeyUsageTotals;
}

export class KeyCache {
  private byHash = new Map<string, CachedKey>();
  private byId = new Map<string, CachedKey>();
  private generation = -1;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly store: KeyStore,
    /** Runs before a reload, so usage not yet written is not overwritten by older totals. */
    private readonly beforeReload: () => void = () => {},
    /** Runs after a reload with the ids of the keys that exist now (the limiter forgets the others). */
    private readonly afterReload: (ids: Set<string>) => void = () => {},
  ) {
    this.reloadIfChanged();
  }

  start(intervalMs = 500): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.reloadIfChanged(), intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  reloadIfChanged(): boolean {
    const gen = this.store.generation();
    if (gen === this.generation) return false;
    this.beforeReload();
    const usage = this.store.allUsage();
    const byHash = new Map<string, CachedKey>();
    const byId = new Map<string, CachedKey>();
    for (const key of this.store.list()) {
      const cached: CachedKey = {
        key,
        digest: Buffer.from(key.hash, "hex"),
        allowsModel: compileModelPermission(key.modelMode, key.models),
        usage: usage.get(key.id) ?? { requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null },
      };
      byHash.set(key.hash, cached);
      byId.set(key.id, cached);
    }
    this.byHash = byHash;
    this.byId = byId;
    this.generation = gen;
    this.afterReload(new Set(byId.keys()));
    return true;
  }

  /** The key a secret belongs to, or null. The digest found is compared again in constant time. */
  lookup(secret: string): CachedKey | null {
    const digest = sha256Bytes(secret);
    const found = this.byHash.get(digest.toHex());
    if (!found || !digestsEqual(found.digest, digest)) return null;
    return found;
  }

  get(id: string): CachedKey | undefined {
    return this.byId.get(id);
  }
}
