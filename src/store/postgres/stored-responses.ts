/** Stored responses in PostgreSQL (see the port: gateway/responses/stored-response-repository.ts). */
import type { SQL } from "bun";
import { itemsOf, type JsonObject, type StoredResponse, type StoredResponseRepository, type StoredResponseStats } from "../../gateway/responses/stored-response-repository";
import { num } from "./db";
import { GroupCommit } from "../group-commit";

export class PostgresStoredResponses implements StoredResponseRepository {
  constructor(private readonly sql: SQL) {}

  /** Responses that end together are committed together, each caller answered after its batch committed. */
  private readonly writer = new GroupCommit<StoredResponse>((batch) => this.writeBatch(batch));

  put(r: StoredResponse): Promise<void> {
    return this.writer.add(r);
  }

  private async writeBatch(batch: StoredResponse[]): Promise<void> {
    const rows = batch.map((r) => {
      const response = JSON.stringify(r.response);
      const input_items = JSON.stringify(r.inputItems);
      return { id: r.id, key_id: r.keyId, previous_id: r.previousId, model: r.model, created_at: r.createdAt, expires_at: r.expiresAt, response, input_items, bytes: response.length + input_items.length };
    });
    const items = batch.flatMap((r) => itemsOf(r).map((item) => ({ key_id: r.keyId, item_id: item.id as string, response_id: r.id, item: JSON.stringify(item) })));
    await this.sql.begin(async (tx) => {
      await tx`INSERT INTO stored_responses ${tx(rows)} ON CONFLICT (id) DO NOTHING`;
      // An item replayed with its id (a caller sending back an earlier output) stays with the response that made it.
      if (items.length > 0) await tx`INSERT INTO stored_items ${tx(items)} ON CONFLICT (key_id, item_id) DO NOTHING`;
    });
  }

  async get(keyId: string, id: string, now: number): Promise<StoredResponse | null> {
    const [row] = await this.sql`SELECT * FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} AND expires_at > ${now}`;
    return row ? fromRow(row) : null;
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} RETURNING id`;
    return rows.length > 0;
  }

  async items(keyId: string, ids: readonly string[], now: number): Promise<Map<string, JsonObject>> {
    const out = new Map<string, JsonObject>();
    if (ids.length === 0) return out;
    const rows = await this.sql`SELECT i.item_id, i.item FROM stored_items i JOIN stored_responses r ON r.id = i.response_id
      WHERE i.key_id = ${keyId} AND i.item_id IN ${this.sql([...new Set(ids)])} AND r.expires_at > ${now}`;
    for (const row of rows) out.set(row.item_id, JSON.parse(row.item));
    return out;
  }

  async itemSizes(keyId: string, ids: readonly string[], now: number): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    // octet_length of a stored text reads its size, not the (possibly TOASTed) text.
    const rows = await this.sql`SELECT i.item_id, octet_length(i.item) AS bytes FROM stored_items i JOIN stored_responses r ON r.id = i.response_id
      WHERE i.key_id = ${keyId} AND i.item_id IN ${this.sql([...new Set(ids)])} AND r.expires_at > ${now}`;
    for (const row of rows) out.set(row.item_id, num(row.bytes));
    return out;
  }

  async purgeExpired(now: number): Promise<number> {
    const rows = await this.sql`DELETE FROM stored_responses WHERE expires_at <= ${now} RETURNING id`;
    return rows.length;
  }

  async stats(keyId?: string): Promise<StoredResponseStats> {
    const [row] =
      keyId === undefined
        ? await this.sql`SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses`
        : await this.sql`SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses WHERE key_id = ${keyId}`;
    return { responses: num(row.n), bytes: num(row.b) };
  }
}

function fromRow(row: Record<string, any>): StoredResponse {
  return {
    id: row.id,
    keyId: row.key_id,
    previousId: row.previous_id,
    model: row.model,
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    response: JSON.parse(row.response),
    inputItems: JSON.parse(row.input_items),
    bytes: num(row.bytes),
  };
}
