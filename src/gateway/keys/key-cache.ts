/**
 * The server's view of API keys: loaded at start, looked up by the SHA-256 of the presented secret with no
 * query per request, and reloaded when the change feed reports a change to keys (made by this process, the
 * CLI or another instance; the embedded feed hears of it within a quarter of a second).
 */
import { NO_USAGE, type ApiKey, type KeyRepository, type KeyUsageTotals } from "./key-repository";
import type { ChangeFeed } from "../../state/change-feed";
import { digestsEqual, sha256Bytes } from "../../secrets";
import { compileModelPermission, type ModelMatcher } from "../limits/rules/model-match";

export interface CachedKey {
  key: ApiKey;
  /** The stored SHA-256 of the secret, decoded once. */
  digest: Uint8Array;
  allowsModel: ModelMatcher;
  /** The totals the database recorded at the last reload; the limiter counts from them (see RecordedUsage). */
  usage: KeyUsageTotals;
}

export interface KeyCacheHooks {
  /** Runs before a reload reads the totals, so usage not yet written is not read as older totals. */
  beforeReload?: () => void | Promise<void>;
  /** Runs after a reload with the ids of the keys that exist now (the limiter forgets the others). */
  afterReload?: (ids: Set<string>) => void;
  /** A reload the change feed started failed (the keys loaded before stay in use). */
  onError?: (err: unknown) => void;
}

export class KeyCache {
  private byHash = new Map<string, CachedKey>();
  private byId = new Map<string, CachedKey>();
  /** The change-feed version the loaded keys reflect; -1 before the first load. */
  private loadedVersion = -1;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly repo: KeyRepository,
    private readonly changes: ChangeFeed,
    private readonly hooks: KeyCacheHooks = {},
  ) {}

  /** Loads the keys and follows changes until stop(). */
  async start(): Promise<void> {
    this.unsubscribe ??= this.changes.subscribe("keys", () => {
      this.reload().catch((err) => this.hooks.onError?.(err));
    });
    await this.reload();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * Loads the keys now. Calls made while a load runs share one more load after it, so a caller that changed a
   * key and then reloads always sees its change, and a burst of changes costs two loads, not one each.
   */
  reload(): Promise<void> {
    if (!this.running) {
      this.running = this.load().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.reload();
      });
    return this.queued;
  }

  /** Reloads when the change feed moved since the last load; true when it did (a lookup that missed may retry). */
  async reloadIfChanged(): Promise<boolean> {
    if (this.changes.version("keys") === this.loadedVersion) return false;
    await this.reload();
    return true;
  }

  private async load(): Promise<void> {
    const version = this.changes.version("keys");
    await this.hooks.beforeReload?.();
    const [usage, keys] = await Promise.all([this.repo.allUsage(), this.repo.list()]);
    const byHash = new Map<string, CachedKey>();
    const byId = new Map<string, CachedKey>();
    for (const key of keys) {
      const cached: CachedKey = {
        key,
        digest: Buffer.from(key.hash, "hex"),
        allowsModel: compileModelPermission(key.modelMode, key.models),
        usage: usage.get(key.id) ?? { ...NO_USAGE },
      };
      byHash.set(key.hash, cached);
      byId.set(key.id, cached);
    }
    this.byHash = byHash;
    this.byId = byId;
    this.loadedVersion = version;
    this.hooks.afterReload?.(new Set(byId.keys()));
  }

  /** The key a secret belongs to, or null. The digest found is compared again in constant time. */
  lookup(secret: string): CachedKey | null {
    const digest = sha256Bytes(secret);
    const found = this.byHash.get(digest.toHex());
    if (!found || !digestsEqual(found.digest, digest)) return null;
    return found;
  }

  /**
   * `lookup`, and on a miss one look in the repository: a key created a moment ago (by the CLI, another instance)
   * works at once, before the change feed's notice arrives. Found: the cache reloads (totals included) and
   * answers from it. Misses of the same secret while one look runs share it.
   */
  async resolve(secret: string): Promise<CachedKey | null> {
    const hit = this.lookup(secret);
    if (hit) return hit;
    const hash = sha256Bytes(secret).toHex();
    let pending = this.resolving.get(hash);
    if (!pending) {
      pending = this.repo
        .getByHash(hash)
        .then(async (key) => {
          if (!key) return null;
          await this.reload();
          return this.lookup(secret);
        })
        .finally(() => this.resolving.delete(hash));
      this.resolving.set(hash, pending);
    }
    return pending;
  }

  private readonly resolving = new Map<string, Promise<CachedKey | null>>();

  get(id: string): CachedKey | undefined {
    return this.byId.get(id);
  }
}
