/**
 * API keys and their recorded usage totals: the gateway's port for them. The embedded default is SQLite
 * (store/sqlite/keys.ts); a shared database implements the same calls. Changes reach running servers through
 * the change feed's "keys" topic, whichever process or instance made them.
 */
export type ModelMode = "allow" | "deny";

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  hash: string;
  status: string;
  notBefore: number | null;
  expiresAt: number | null;
  modelMode: ModelMode | null;
  models: string[];
  quotaTokens: number | null;
  /** In currency units (prices are per million tokens in the same unit). */
  balance: number | null;
  rpm: number | null;
  rpd: number | null;
  concurrency: number | null;
  maxTokens: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface KeyUsageTotals {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** input + output tokens: what a token quota counts. */
  tokens: number;
  spent: number;
  /** When the totals were last zeroed (a new quota period); null if never. */
  resetAt: number | null;
}

export const NO_USAGE: Readonly<KeyUsageTotals> = Object.freeze({ requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null });

/** Fields an operator may set; `null` clears a limit (unlimited), `undefined` leaves it as it is. */
export interface KeyFields {
  name?: string;
  status?: string;
  notBefore?: number | null;
  expiresAt?: number | null;
  modelMode?: ModelMode | null;
  models?: string[];
  quotaTokens?: number | null;
  balance?: number | null;
  rpm?: number | null;
  rpd?: number | null;
  concurrency?: number | null;
  maxTokens?: number | null;
}

export interface KeyRepository {
  /** Creates a key with zero usage; the secret is returned here once and never stored. */
  create(fields: KeyFields & { name: string }): Promise<{ key: ApiKey; secret: string }>;
  /** By id, or else by name. */
  get(idOrName: string): Promise<ApiKey | null>;
  /** The key whose secret has this SHA-256 (hex), or null: a cache that missed asks here before refusing. */
  getByHash(hash: string): Promise<ApiKey | null>;
  /** All keys, oldest first. */
  list(): Promise<ApiKey[]>;
  /** null when there is no such key. */
  update(idOrName: string, fields: KeyFields): Promise<ApiKey | null>;
  /** Deletes the key and its totals; false when there was none. */
  delete(idOrName: string): Promise<boolean>;
  /** A key's recorded totals (zero for an unknown key). */
  usage(keyId: string): Promise<KeyUsageTotals>;
  /** Every key's totals at once, for loading a server's cache. */
  allUsage(): Promise<Map<string, KeyUsageTotals>>;
  /** Zeroes a key's totals and stamps the new period (`resetAt`). */
  resetUsage(keyId: string): Promise<void>;
}
