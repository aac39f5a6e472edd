/** API keys and their recorded usage totals in SQLite: the SQL; the row mapping is shared (store/rows/keys.ts). */
import type { Database } from "bun:sqlite";
import type { ApiKey, KeyFields, KeyRepository, KeyUsageTotals } from "../../gateway/keys/key-repository";
import { displayPrefix, newApiKeySecret, randomToken, sha256Hex } from "../../secrets";
import type { Row } from "../rows/codec";
import { KEY_COLUMNS as COLUMNS, MICROS, keyFromRow, usageTotalsFromRow } from "../rows/keys";
import { sqliteColumns } from "./columns";

type KeyRow = Row;
const fromRow = (r: KeyRow) => keyFromRow(r, sqliteColumns);

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
    const r = this.db.query("SELECT requests, input_tokens, output_tokens, spent_micros, reset_at FROM key_usage WHERE key_id = ?").get(keyId) as Row | null;
    if (!r) return { requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null };
    return usageTotalsFromRow(r, sqliteColumns);
  }

  /** All usage totals at once, for loading the server's cache. */
  async allUsage(): Promise<Map<string, KeyUsageTotals>> {
    const rows = this.db.query("SELECT key_id, requests, input_tokens, output_tokens, spent_micros, reset_at FROM key_usage").all() as Row[];
    return new Map(rows.map((r) => [r.key_id as string, usageTotalsFromRow(r, sqliteColumns)]));
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
