/** API keys and their recorded usage totals in SQLite. The only place that knows their table layout. */
import type { Database } from "bun:sqlite";
import type { ApiKey, KeyFields, KeyRepository, KeyUsageTotals, ModelMode } from "../../gateway/keys/key-repository";
import { displayPrefix, newApiKeySecret, randomToken, sha256Hex } from "../../secrets";

const MICROS = 1_000_000;

const COLUMNS: Record<Exclude<keyof KeyFields, "models" | "balance">, string> = {
  name: "name",
  status: "status",
  notBefore: "not_before",
  expiresAt: "expires_at",
  modelMode: "model_mode",
  quotaTokens: "quota_tokens",
  rpm: "rpm",
  rpd: "rpd",
  concurrency: "concurrency",
  maxTokens: "max_tokens",
};

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  status: string;
  not_before: number | null;
  expires_at: number | null;
  model_mode: ModelMode | null;
  models: string;
  quota_tokens: number | null;
  balance_micros: number | null;
  rpm: number | null;
  rpd: number | null;
  concurrency: number | null;
  max_tokens: number | null;
  created_at: number;
  updated_at: number;
}

function fromRow(r: KeyRow): ApiKey {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hash: r.hash,
    status: r.status,
    notBefore: r.not_before,
    expiresAt: r.expires_at,
    modelMode: r.model_mode,
    models: JSON.parse(r.models),
    quotaTokens: r.quota_tokens,
    balance: r.balance_micros === null ? null : r.balance_micros / MICROS,
    rpm: r.rpm,
    rpd: r.rpd,
    concurrency: r.concurrency,
    maxTokens: r.max_tokens,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class SqliteKeyRepository implements KeyRepository {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates a key; the secret is returned here once and never stored. */
  async create(fields: KeyFields & { name: string }): Promise<{ key: ApiKey; secret: string }> {
    const secret = newApiKeySecret();
    const id = "key_" + randomToken(9);
    const t = this.now();
    this.db.transaction(() => {
      this.db
        .query(
          `INSERT INTO api_keys (id, name, prefix, hash, status, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'active', ?, ?)`,
        )
        .run(id, fields.name, displayPrefix(secret), sha256Hex(secret), t, t);
      this.db.query("INSERT INTO key_usage (key_id) VALUES (?)").run(id);
      this.applyFields(id, { ...fields, name: undefined });
    })();
    return { key: this.find(id)!, secret };
  }

  async get(idOrName: string): Promise<ApiKey | null> {
    return this.find(idOrName);
  }

  private find(idOrName: string): ApiKey | null {
    const row = this.db.query("SELECT * FROM api_keys WHERE id = ? OR name = ?").get(idOrName, idOrName) as
      | KeyRow
      | null;
    return row ? fromRow(row) : null;
  }

  async getByHash(hash: string): Promise<ApiKey | null> {
    const row = this.db.query("SELECT * FROM api_keys WHERE hash = ?").get(hash) as KeyRow | null;
    return row ? fromRow(row) : null;
  }

  async list(): Promise<ApiKey[]> {
    return (this.db.query("SELECT * FROM api_keys ORDER BY created_at, id").all() as KeyRow[]).map(fromRow);
  }

  async update(idOrName: string, fields: KeyFields): Promise<ApiKey | null> {
    const key = this.find(idOrName);
    if (!key) return null;
    this.db.transaction(() => this.applyFields(key.id, fields))();
    return this.find(key.id);
  }

  async delete(idOrName: string): Promise<boolean> {
    const key = this.find(idOrName);
    if (!key) return false;
    this.db.query("DELETE FROM api_keys WHERE id = ?").run(key.id);
    return true;
  }

  async usage(keyId: string): Promise<KeyUsageTotals> {
    const r = this.db
      .query("SELECT requests, input_tokens, output_tokens, spent_micros, reset_at FROM key_usage WHERE key_id = ?")
      .get(keyId) as { requests: number; input_tokens: number; output_tokens: number; spent_micros: number; reset_at: number | null } | null;
    if (!r) return { requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null };
    return {
      requests: r.requests,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      tokens: r.input_tokens + r.output_tokens,
      spent: r.spent_micros / MICROS,
      resetAt: r.reset_at,
    };
  }

  /** All usage totals at once, for loading the server's cache. */
  async allUsage(): Promise<Map<string, KeyUsageTotals>> {
    const rows = this.db
      .query("SELECT key_id, requests, input_tokens, output_tokens, spent_micros, reset_at FROM key_usage")
      .all() as Array<{ key_id: string; requests: number; input_tokens: number; output_tokens: number; spent_micros: number; reset_at: number | null }>;
    return new Map(
      rows.map((r) => [
        r.key_id,
        {
          requests: r.requests,
          inputTokens: r.input_tokens,
          outputTokens: r.output_tokens,
          tokens: r.input_tokens + r.output_tokens,
          spent: r.spent_micros / MICROS,
          resetAt: r.reset_at,
        },
      ]),
    );
  }

  /** Zeroes a key's totals (a new quota period); a trigger moves the keys generation so servers reload. */
  async resetUsage(keyId: string): Promise<void> {
    this.db
      .query(
        `UPDATE key_usage SET requests = 0, input_tokens = 0, output_tokens = 0, spent_micros = 0, reset_at = ?
         WHERE key_id = ?`,
      )
      .run(this.now(), keyId);
  }

  private applyFields(id: string, fields: KeyFields): void {
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    for (const [field, column] of Object.entries(COLUMNS) as Array<[keyof typeof COLUMNS, string]>) {
      const v = fields[field];
      if (v === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(v as string | number | null);
    }
    if (fields.models !== undefined) {
      sets.push("models = ?");
      values.push(JSON.stringify(fields.models));
    }
    if (fields.balance !== undefined) {
      sets.push("balance_micros = ?");
      values.push(fields.balance === null ? null : Math.round(fields.balance * MICROS));
    }
    if (sets.length === 0) return;
    sets.push("updated_at = ?");
    values.push(this.now(), id);
    this.db.query(`UPDATE api_keys SET ${sets.join(", ")} WHERE id = ?`).run(...values);
  }
}
