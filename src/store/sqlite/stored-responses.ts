/** Stored responses in SQLite (see the port: gateway/responses/stored-response-repository.ts). */
import type { Database, Statement } from "bun:sqlite";
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
import { GroupCommit } from "../../state/group-commit";
import type { Row } from "../rows/codec";
import { itemsByResponse, namedItemsIn, storedResponseFromRow, type NamedItem } from "../rows/stored-responses";
import { sqliteColumns } from "./columns";

const fromRow = (r: Row) => storedResponseFromRow(r, sqliteColumns);

/**
 * The row an item id names for a key: the copy in the earliest of the key's live responses that have it (a caller
 * may send an item back with its id in later turns; response ids are time-ordered, so the response that made it
 * wins while it lives). Read in the order of the index by item id, so the first live copy of the key ends the
 * search, however many copies there are. Parameters: item id, key id, now.
 */
const EARLIEST_LIVE = `stored_items i JOIN stored_responses r ON r.id = i.response_id
  WHERE i.item_id = ? AND r.key_id = ? AND r.expires_at > ?
  ORDER BY i.response_id, i.position LIMIT 1`;

/** Adds kept responses to their key's totals (the trigger on delete takes them off). */
const ADD_TOTALS = `INSERT INTO stored_response_totals (key_id, responses, bytes) VALUES (?, ?, ?)
  ON CONFLICT (key_id) DO UPDATE SET responses = responses + excluded.responses, bytes = bytes + excluded.bytes`;

/** Every key's totals counted again from its rows: after rows were written some other way (`gantry store copy`). */
export const RECOUNT_TOTALS = `DELETE FROM stored_response_totals;
  INSERT INTO stored_response_totals (key_id, responses, bytes) SELECT key_id, count(*), sum(bytes) FROM stored_responses GROUP BY key_id;`;

interface Put {
  r: StoredResponse;
  limits: KeepLimits | undefined;
}

/** A batch written in one transaction, and the PRAGMAs around it (its commit not synced: see writeBatch). */
interface BatchWriter {
  write(puts: Put[]): void;
  relax: Statement;
  strict: Statement;
}

export class SqliteStoredResponses implements StoredResponseRepository {
  constructor(private readonly db: Database) {}

  /** Responses that end together are committed together: one fsync for the batch, each caller answered after it. */
  private readonly writer = new GroupCommit<Put>((batch) => this.writeBatch(batch));

  put(r: StoredResponse, limits?: KeepLimits): Promise<void> {
    return this.writer.add({ r, limits });
  }

  /** The batch's statements and its transaction, made on the first write (a batch per turn under load). */
  private writing: BatchWriter | null = null;

  private writeBatch(puts: Put[]): void {
    const w = (this.writing ??= this.prepareWrites());
    // No fsync of its own: the ledger's commit for the same requests follows in the same turn of the event loop
    // (the routes keep a response before they settle it), and its fsync makes these WAL frames durable too, since
    // the WAL is written in order. One fsync per batch of requests instead of two.
    this.unsynced(() => w.write(puts));
  }

  /** Runs `write` with its commit not synced (synchronous=NORMAL), the connection's FULL again after it. */
  private unsynced<T>(write: () => T): T {
    const w = (this.writing ??= this.prepareWrites());
    const relax = !this.db.inTransaction;
    if (relax) w.relax.run();
    try {
      return write();
    } finally {
      if (relax) w.strict.run();
    }
  }

  private prepareWrites(): BatchWriter {
    const insert = this.db.query(
      `INSERT INTO stored_responses (id, key_id, previous_id, model, account, created_at, expires_at, response, input_items, input_count, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertItem = this.db.query("INSERT INTO stored_items (response_id, position, item_id, item) VALUES (?, ?, ?, ?)");
    const addTotals = this.db.query(ADD_TOTALS);
    const write = this.db.transaction((puts: Put[]) => {
      // What the batch adds to each key's totals, written once per key (migration 21: a trigger did it per row).
      const added = new Map<string, { responses: number; bytes: number }>();
      for (const { r } of puts) {
        const response = r.responseJson ?? JSON.stringify(r.response);
        const inputs = r.inputItems.map((item) => JSON.stringify(item));
        // A short input list in the response's row; rows for a long one, and for the items found by id that
        // the response's row cannot find (ids that do not name it).
        const items = storedItemsOf(r, inputs);
        const bytes = response.length + listLength(inputs);
        insert.run(r.id, r.keyId, r.previousId, r.model, r.account ?? null, r.createdAt, r.expiresAt, response, items.inputList, inputs.length, bytes);
        for (const row of items.rows) insertItem.run(r.id, row.position, row.itemId, row.item);
        const sum = added.get(r.keyId);
        if (sum) {
          sum.responses += 1;
          sum.bytes += bytes;
        } else added.set(r.keyId, { responses: 1, bytes });
      }
      for (const [keyId, sum] of added) addTotals.run(keyId, sum.responses, sum.bytes);
      this.evict(puts);
    });
    return { write, relax: this.db.query("PRAGMA synchronous = NORMAL"), strict: this.db.query("PRAGMA synchronous = FULL") };
  }

  /**
   * Holds each key of the batch to its limits: its oldest responses go, never one this batch stored, at most about
   * EVICTION_PER_PUT of them a key.
   */
  private evict(puts: Put[]): void {
    const limitsOf = new Map<string, KeepLimits>();
    for (const p of puts) if (p.limits) limitsOf.set(p.r.keyId, p.limits);
    if (limitsOf.size === 0) return;
    const fresh = new Set(puts.map((p) => p.r.id));
    const totalsOf = this.db.query("SELECT responses, bytes FROM stored_response_totals WHERE key_id = ?");
    const oldest = this.db.query("SELECT id, bytes FROM stored_responses WHERE key_id = ? ORDER BY created_at, id LIMIT ?");
    const remove = this.db.query("DELETE FROM stored_responses WHERE id = ?");
    for (const [keyId, limits] of limitsOf) {
      let totals = totalsOf.get(keyId) as { responses: number; bytes: number } | null;
      if (!totals || !overLimits(totals, limits)) continue;
      const before = totals.responses;
      for (let more = true; more; ) {
        const step = evictionOf(totals, limits, fresh, oldest.all(keyId, evictionPageSize(totals, limits)) as Array<{ id: string; bytes: number }>, before);
        for (const id of step.remove) remove.run(id);
        ({ totals, more } = step);
      }
    }
  }

  async get(keyId: string, id: string, now: number): Promise<StoredResponse | null> {
    const row = this.db.query("SELECT * FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?").get(id, keyId, now) as Row | null;
    if (!row) return null;
    const stored = fromRow(row);
    if (stored.inputItems.length > 0 || row.input_count === 0) return stored;
    const inputs = this.db.query("SELECT item FROM stored_items WHERE response_id = ? AND position < ? ORDER BY position").all(id, row.input_count as number) as Array<{ item: string }>;
    return { ...stored, inputItems: inputs.map((r) => JSON.parse(r.item)) };
  }

  async responseObject(keyId: string, id: string, now: number): Promise<JsonObject | null> {
    const row = this.db.query("SELECT response FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?").get(id, keyId, now) as { response: string } | null;
    return row ? JSON.parse(row.response) : null;
  }

  async inputItems(keyId: string, id: string, now: number, query: InputItemsQuery): Promise<InputItemsPage | null> {
    const live = this.db.query("SELECT input_count, input_items FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?").get(id, keyId, now) as { input_count: number; input_items: string } | null;
    if (!live) return null;
    // A short list is kept in the row (storedItemsOf), a long one as rows by position.
    if (live.input_items !== "[]") return pageOfList(JSON.parse(live.input_items), query);
    const asc = query.order === "asc";
    // Input items are the rows below input_count; the output items follow them.
    let from = asc ? -1 : live.input_count;
    if (query.after !== null) {
      // The first of that id in the order asked for, as a list read whole would find it.
      const at = this.db
        .query(`SELECT ${asc ? "min" : "max"}(position) AS p FROM stored_items WHERE item_id = ? AND response_id = ? AND position < ?`)
        .get(query.after, id, live.input_count) as { p: number | null };
      if (at.p === null) return "after_not_found";
      from = at.p;
    }
    const rows = this.db
      .query(
        asc
          ? "SELECT item FROM stored_items WHERE response_id = ? AND position > ? AND position < ? ORDER BY position LIMIT ?"
          : "SELECT item FROM stored_items WHERE response_id = ? AND position < ? AND position >= ? ORDER BY position DESC LIMIT ?",
      )
      .all(id, from, asc ? live.input_count : 0, query.limit + 1) as Array<{ item: string }>;
    return { items: rows.slice(0, query.limit).map((r) => JSON.parse(r.item)), hasMore: rows.length > query.limit };
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    return this.db.query("DELETE FROM stored_responses WHERE id = ? AND key_id = ?").run(id, keyId).changes > 0;
  }

  async items(keyId: string, ids: readonly string[], now: number): Promise<Map<string, JsonObject>> {
    const named = this.namedItems(keyId, ids, now);
    const out = new Map<string, JsonObject>();
    const find = this.db.query(`SELECT i.item FROM ${EARLIEST_LIVE}`);
    for (const id of new Set(ids)) {
      const found = named.get(id);
      if (found) {
        out.set(id, found.item);
        continue;
      }
      const row = find.get(id, keyId, now) as { item: string } | null;
      if (row) out.set(id, JSON.parse(row.item));
    }
    return out;
  }

  async itemSizes(keyId: string, ids: readonly string[], now: number): Promise<Map<string, number>> {
    const named = this.namedItems(keyId, ids, now);
    const out = new Map<string, number>();
    // octet_length reads the size from the record, not the text.
    const find = this.db.query(`SELECT octet_length(i.item) AS bytes FROM ${EARLIEST_LIVE}`);
    for (const id of new Set(ids)) {
      const found = named.get(id);
      if (found) {
        out.set(id, found.bytes);
        continue;
      }
      const row = find.get(id, keyId, now) as { bytes: number } | null;
      if (row) out.set(id, row.bytes);
    }
    return out;
  }

  /**
   * The items among `ids` that name a live response of the key and are in its row (its input list, its output): no
   * row of their own. An id not found there (an older id, a caller's, its response gone) is looked for in the rows.
   */
  private namedItems(keyId: string, ids: readonly string[], now: number): Map<string, NamedItem> {
    const out = new Map<string, NamedItem>();
    const read = this.db.query("SELECT response, input_items FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?");
    for (const [responseId, wanted] of itemsByResponse(ids)) {
      const row = read.get(responseId, keyId, now) as { response: string; input_items: string } | null;
      if (row) namedItemsIn(row.input_items, row.response, wanted, out);
    }
    return out;
  }

  async purgeExpired(now: number): Promise<number> {
    // The oldest to expire first, by the index on expires_at; `changes` counts these rows, not what the trigger on
    // delete and the items' cascade touch.
    const chunk = this.db.query(
      "DELETE FROM stored_responses WHERE rowid IN (SELECT rowid FROM stored_responses WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
    );
    let removed = 0;
    for (;;) {
      // Not synced either: a purge lost to a crash of the machine is done again by the next one.
      const n = this.unsynced(() => chunk.run(now, PURGE_CHUNK).changes);
      removed += n;
      if (n < PURGE_CHUNK) return removed;
      // bun:sqlite runs a statement on the event loop: the requests waiting go before the next chunk.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  async stats(keyId?: string): Promise<StoredResponseStats> {
    const row = (
      keyId === undefined
        ? this.db.query("SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses").get()
        : this.db.query("SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM stored_responses WHERE key_id = ?").get(keyId)
    ) as { n: number; b: number };
    return { responses: row.n, bytes: row.b };
  }
}
