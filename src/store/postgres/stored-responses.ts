/** Stored responses in PostgreSQL (see the port: gateway/responses/stored-response-repository.ts). */
import type { SQL } from "bun";
import {
  evictionOf,
  evictionPageSize,
  pageOfList,
  storedItemsOf,
  overLimits,
  listLength,
  PURGE_CHUNK,
  type InputItemsPage,
  type InputItemsQuery,
  type KeepLimits,
  type JsonObject,
  type StoredResponse,
  type StoredResponseRepository,
  type StoredResponseStats,
} from "../../gateway/responses/stored-response-repository";
import { num } from "./db";
import { GroupCommit } from "../../state/group-commit";
import type { Row } from "../rows/codec";
import { itemsByResponse, namedItemsIn, storedResponseFromRow, type NamedItem } from "../rows/stored-responses";
import { postgresColumns } from "./columns";

const fromRow = (r: Row) => storedResponseFromRow(r, postgresColumns);

interface Put {
  r: StoredResponse;
  limits: KeepLimits | undefined;
}

/**
 * Holds each key of the batch to its limits, in the batch's transaction: its oldest go, never one this batch stored,
 * at most about EVICTION_PER_PUT of them a key.
 */
async function evict(tx: SQL, puts: Put[]): Promise<void> {
  const limitsOf = new Map<string, KeepLimits>();
  for (const p of puts) if (p.limits) limitsOf.set(p.r.keyId, p.limits);
  const fresh = new Set(puts.map((p) => p.r.id));
  for (const [keyId, limits] of limitsOf) {
    const [row] = await tx`SELECT responses, bytes FROM stored_response_totals WHERE key_id = ${keyId}`;
    if (!row) continue;
    let totals = { responses: num(row.responses), bytes: num(row.bytes) };
    if (!overLimits(totals, limits)) continue;
    const before = totals.responses;
    for (let more = true; more; ) {
      const page = await tx`SELECT id, bytes FROM stored_responses WHERE key_id = ${keyId} ORDER BY created_at, id LIMIT ${evictionPageSize(totals, limits)}`;
      const step = evictionOf(totals, limits, fresh, page.map((r: { id: string; bytes: unknown }) => ({ id: r.id, bytes: num(r.bytes) })), before);
      if (step.remove.length > 0) await tx`DELETE FROM stored_responses WHERE id IN ${tx(step.remove)}`;
      ({ totals, more } = step);
    }
  }
}

/** Rows per INSERT: at four parameters a row, well under PostgreSQL's 65,535 per statement. */
const INSERT_ROWS = 5000;

export class PostgresStoredResponses implements StoredResponseRepository {
  constructor(private readonly sql: SQL) {}

  /** Responses that end together are committed together, each caller answered after its batch committed. */
  private readonly writer = new GroupCommit<Put>((batch) => this.writeBatch(batch));

  put(r: StoredResponse, limits?: KeepLimits): Promise<void> {
    return this.writer.add({ r, limits });
  }

  private async writeBatch(puts: Put[]): Promise<void> {
    const items: Array<{ response_id: string; position: number; item_id: string | null; item: string }> = [];
    const rows = puts.map(({ r }) => {
      const response = r.responseJson ?? JSON.stringify(r.response);
      const texts = r.inputItems.map((item) => JSON.stringify(item));
      // A short input list in the response's row; rows for a long one, and for the items found by id that the
      // response's row cannot find (ids that do not name it).
      const stored = storedItemsOf(r, texts);
      for (const row of stored.rows) items.push({ response_id: r.id, position: row.position, item_id: row.itemId, item: row.item });
      return {
        id: r.id,
        key_id: r.keyId,
        previous_id: r.previousId,
        model: r.model,
        account: r.account ?? null,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
        response,
        input_items: stored.inputList,
        input_count: texts.length,
        bytes: response.length + listLength(texts),
      };
    });
    await this.sql.begin(async (tx) => {
      await tx`INSERT INTO stored_responses ${tx(rows)} ON CONFLICT (id) DO NOTHING`;
      // A response's own rows only: ON CONFLICT covers a response put twice (its row was not inserted again).
      for (let at = 0; at < items.length; at += INSERT_ROWS) {
        await tx`INSERT INTO stored_items ${tx(items.slice(at, at + INSERT_ROWS))} ON CONFLICT (response_id, position) DO NOTHING`;
      }
      await evict(tx, puts);
    });
  }

  async get(keyId: string, id: string, now: number): Promise<StoredResponse | null> {
    const [row] = await this.sql`SELECT * FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} AND expires_at > ${now}`;
    if (!row) return null;
    const stored = fromRow(row);
    if (stored.inputItems.length > 0 || num(row.input_count) === 0) return stored;
    const inputs = await this.sql`SELECT item FROM stored_items WHERE response_id = ${id} AND position < ${row.input_count} ORDER BY position`;
    return { ...stored, inputItems: inputs.map((r: { item: string }) => JSON.parse(r.item)) };
  }

  async responseObject(keyId: string, id: string, now: number): Promise<JsonObject | null> {
    const [row] = await this.sql`SELECT response FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} AND expires_at > ${now}`;
    return row ? JSON.parse(row.response) : null;
  }

  async inputItems(keyId: string, id: string, now: number, query: InputItemsQuery): Promise<InputItemsPage | null> {
    const [live] = await this.sql`SELECT input_count, input_items FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} AND expires_at > ${now}`;
    if (!live) return null;
    // A short list is kept in the row (storedItemsOf), a long one as rows by position.
    if (live.input_items !== "[]") return pageOfList(JSON.parse(live.input_items), query);
    const count = num(live.input_count);
    const asc = query.order === "asc";
    // Input items are the rows below input_count; the output items follow them.
    let from = asc ? -1 : count;
    if (query.after !== null) {
      // The first of that id in the order asked for, as a list read whole would find it.
      const [at] = asc
        ? await this.sql`SELECT min(position) AS p FROM stored_items WHERE item_id = ${query.after} AND response_id = ${id} AND position < ${count}`
        : await this.sql`SELECT max(position) AS p FROM stored_items WHERE item_id = ${query.after} AND response_id = ${id} AND position < ${count}`;
      if (at.p === null) return "after_not_found";
      from = num(at.p);
    }
    const rows = asc
      ? await this.sql`SELECT item FROM stored_items WHERE response_id = ${id} AND position > ${from} AND position < ${count} ORDER BY position LIMIT ${query.limit + 1}`
      : await this.sql`SELECT item FROM stored_items WHERE response_id = ${id} AND position < ${from} AND position >= 0 ORDER BY position DESC LIMIT ${query.limit + 1}`;
    return { items: rows.slice(0, query.limit).map((r: { item: string }) => JSON.parse(r.item)), hasMore: rows.length > query.limit };
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM stored_responses WHERE id = ${id} AND key_id = ${keyId} RETURNING id`;
    return rows.length > 0;
  }

  /**
   * Per id, the copy in the earliest of the key's live responses that have it (a caller may send an item back with
   * its id in later turns; response ids are time-ordered, so the response that made it wins while it lives), read
   * in the order of the index by item id so the first live copy ends the search, however many copies there are.
   */
  async items(keyId: string, ids: readonly string[], now: number): Promise<Map<string, JsonObject>> {
    const out = new Map<string, JsonObject>();
    if (ids.length === 0) return out;
    const named = await this.namedItems(keyId, ids, now);
    for (const [id, found] of named) out.set(id, found.item);
    const rest = [...new Set(ids)].filter((id) => !named.has(id));
    if (rest.length === 0) return out;
    const rows = await this.sql`SELECT x.item_id, x.item FROM unnest(${rest}::text[]) AS q(id), LATERAL (
      SELECT i.item_id, i.item FROM stored_items i JOIN stored_responses r ON r.id = i.response_id
      WHERE i.item_id = q.id AND r.key_id = ${keyId} AND r.expires_at > ${now} ORDER BY i.response_id, i.position LIMIT 1) x`;
    for (const row of rows) out.set(row.item_id, JSON.parse(row.item));
    return out;
  }

  /**
   * The items among `ids` that name a live response of the key and are in its row (its input list, its output): no
   * row of their own. An id not found there (an older id, a caller's, its response gone) is looked for in the rows.
   */
  private async namedItems(keyId: string, ids: readonly string[], now: number): Promise<Map<string, NamedItem>> {
    const out = new Map<string, NamedItem>();
    const byResponse = itemsByResponse(ids);
    if (byResponse.size === 0) return out;
    const rows = await this.sql`SELECT id, response, input_items FROM stored_responses
      WHERE id IN ${this.sql([...byResponse.keys()])} AND key_id = ${keyId} AND expires_at > ${now}`;
    for (const row of rows) namedItemsIn(row.input_items, row.response, byResponse.get(row.id)!, out);
    return out;
  }

  /** As items, the sizes: octet_length of a stored text reads its size, not the (possibly TOASTed) text. */
  async itemSizes(keyId: string, ids: readonly string[], now: number): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const named = await this.namedItems(keyId, ids, now);
    for (const [id, found] of named) out.set(id, found.bytes);
    const rest = [...new Set(ids)].filter((id) => !named.has(id));
    if (rest.length === 0) return out;
    const rows = await this.sql`SELECT x.item_id, x.bytes FROM unnest(${rest}::text[]) AS q(id), LATERAL (
      SELECT i.item_id, octet_length(i.item) AS bytes FROM stored_items i JOIN stored_responses r ON r.id = i.response_id
      WHERE i.item_id = q.id AND r.key_id = ${keyId} AND r.expires_at > ${now} ORDER BY i.response_id, i.position LIMIT 1) x`;
    for (const row of rows) out.set(row.item_id, num(row.bytes));
    return out;
  }

  async purgeExpired(now: number): Promise<number> {
    // Chunks, each its own transaction: the trigger on delete locks each touched key's totals row until commit, and
    // a put of that key waits for it. Rows another instance's purge holds are skipped, not waited for.
    let removed = 0;
    for (;;) {
      const rows = await this.sql`DELETE FROM stored_responses WHERE id IN (
        SELECT id FROM stored_responses WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${PURGE_CHUNK} FOR UPDATE SKIP LOCKED)
        RETURNING 1`;
      removed += rows.length;
      if (rows.length < PURGE_CHUNK) return removed;
    }
  }

  async stats(keyId?: string): Promise<StoredResponseStats> {
    const [row] =
      keyId === undefined
        ? await this.sql`SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses`
        : await this.sql`SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses WHERE key_id = ${keyId}`;
    return { responses: num(row.n), bytes: num(row.b) };
  }
}
