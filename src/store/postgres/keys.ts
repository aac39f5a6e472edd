/** API keys and their recorded usage totals in PostgreSQL (the same rules as store/sqlite/keys.ts, the
 * same row mapping: store/rows/keys.ts). */
import type { SQL } from "bun";
import type { ApiKey, KeyFields, KeyRepository, KeyUsageTotals } from "../../gateway/keys/key-repository";
import { displayPrefix, newApiKeySecret, randomToken, sha256Hex } from "../../secrets";
import { KEY_COLUMNS as COLUMNS, MICROS, keyFromRow, usageTotalsFromRow } from "../rows/keys";
import { postgresColumns } from "./columns";

type Row = Record<string, unknown>;
const fromRow = (r: Row) => keyFromRow(r, postgresColumns);
const totalsFromRow = (r: Row) => usageTotalsFromRow(r, postgresColumns);

export class PostgresKeyRepository implements KeyRepository {
  constructor(
    private readonly sql: SQL,
    private readonly now: () => number = Date.now,
  ) {}

  async create(fields: KeyFields & { name: string }): Promise<{ key: ApiKey; secret: string }> {
    const secret = newApiKeySecret();
    const id = "key_" + randomToken(9);
    const t = this.now();
    // One transaction: the key, its totals row and its fields appear together (one notification on commit).
    await this.sql.begin(async (tx) => {
      await tx`INSERT INTO api_keys (id, name, prefix, hash, status, created_at, updated_at)
               VALUES (${id}, ${fields.name}, ${displayPrefix(secret)}, ${sha256Hex(secret)}, 'active', ${t}, ${t})`;
      await tx`INSERT INTO key_usage (key_id) VALUES (${id})`;
      await this.applyFields(tx, id, { ...fields, name: undefined });
    });
    return { key: (await this.find(id))!, secret };
  }

  get(idOrName: string): Promise<ApiKey | null> {
    return this.find(idOrName);
  }

  private async find(idOrName: string): Promise<ApiKey | null> {
    // An id wins over a name that happens to equal another key's id.
    const rows = await this.sql`SELECT * FROM api_keys WHERE id = ${idOrName} OR name = ${idOrName} ORDER BY (id = ${idOrName}) DESC LIMIT 1`;
    return rows.length ? fromRow(rows[0]) : null;
  }

  async getByHash(hash: string): Promise<ApiKey | null> {
    const [row] = await this.sql`SELECT * FROM api_keys WHERE hash = ${hash}`;
    return row ? fromRow(row) : null;
  }

  async list(): Promise<ApiKey[]> {
    return (await this.sql`SELECT * FROM api_keys ORDER BY created_at, id`).map(fromRow);
  }

  async update(idOrName: string, fields: KeyFields): Promise<ApiKey | null> {
    const key = await this.find(idOrName);
    if (!key) return null;
    await this.applyFields(this.sql, key.id, fields);
    return this.find(key.id);
  }

  async delete(idOrName: string): Promise<boolean> {
    const key = await this.find(idOrName);
    if (!key) return false;
    const rows = await this.sql`DELETE FROM api_keys WHERE id = ${key.id} RETURNING id`;
    return rows.length === 1;
  }

  async usage(keyId: string): Promise<KeyUsageTotals> {
    const [row] = await this.sql`SELECT * FROM key_usage WHERE key_id = ${keyId}`;
    return row ? totalsFromRow(row) : { requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null };
  }

  async allUsage(): Promise<Map<string, KeyUsageTotals>> {
    const rows = await this.sql`SELECT * FROM key_usage`;
    return new Map(rows.map((r: Row) => [r.key_id as string, totalsFromRow(r)]));
  }

  async resetUsage(keyId: string): Promise<void> {
    await this.sql`UPDATE key_usage SET requests = 0, input_tokens = 0, output_tokens = 0, spent_micros = 0, reset_at = ${this.now()}
                   WHERE key_id = ${keyId}`;
  }

  private async applyFields(sql: SQL, id: string, fields: KeyFields): Promise<void> {
    const sets: string[] = [];
    const values: Array<string | number | null> = [];
    const add = (column: string, value: string | number | null) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    for (const [field, column] of Object.entries(COLUMNS) as Array<[keyof typeof COLUMNS, string]>) {
      const v = fields[field];
      if (v !== undefined) add(column, v as string | number | null);
    }
    if (fields.models !== undefined) add("models", JSON.stringify(fields.models));
    if (fields.balance !== undefined) add("balance_micros", fields.balance === null ? null : Math.round(fields.balance * MICROS));
    if (sets.length === 0) return;
    add("updated_at", this.now());
    values.push(id);
    // Column names come from COLUMNS above, never from input; every value is a parameter.
    await sql.unsafe(`UPDATE api_keys SET ${sets.join(", ")} WHERE id = $${values.length}`, values);
  }
}
