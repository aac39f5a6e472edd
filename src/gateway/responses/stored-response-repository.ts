/**
 * The port of stored responses: what Gantry keeps of each `/v1/responses` call made with `store` not false, per
 * API key, so a later call can continue it (`previous_response_id`), refer to its items (`item_reference`), or
 * fetch and delete it — over an upstream that stores nothing.
 *
 * Each response keeps only what is new in it: the input items its request added (after references were
 * resolved) and its output. A conversation of N turns is N rows, not N copies of a growing history; the history
 * is rebuilt by walking `previousId` back.
 */
import type { JsonObject } from "../wire/responses-types";
import { responseOfItem } from "./named-item-ids";

/** Which response an output item id names (null for other ids): backends find such items in its output. */
export { responseOfItem };

export type { JsonObject };

export interface StoredResponse {
  /** Gantry's id (resp_…), unique: the upstream's ids may repeat. */
  id: string;
  keyId: string;
  previousId: string | null;
  model: string;
  /** The upstream account that produced it (null: not known). */
  account?: string | null;
  /** Epoch ms. */
  createdAt: number;
  expiresAt: number;
  /** The response object as the caller got it (output included). */
  response: JsonObject;
  /**
   * `response` as JSON text, when the caller already has it (a kept stream's terminal event, as the caller got it):
   * `put` keeps it as is instead of serialising `response` again. Only for `put`; `get` never sets it.
   */
  responseJson?: string;
  /**
   * Every output item's id names this response (named-item-ids.ts) or is absent, so none needs a row of its own and
   * `put` need not read `response` for them (a kept stream's response is then parsed only if something reads it).
   */
  outputIdsNamed?: boolean;
  /** The same for the input items: every one's id names this response (none was the caller's or a copy). */
  inputIdsNamed?: boolean;
  /** The items this request added to the conversation, each with its id. */
  inputItems: JsonObject[];
  /** Set by `get`: the length of the JSON text kept (the response and its input items), as `put` measured it. */
  bytes?: number;
}

/**
 * What is kept: every row until the hourly purge removes it, expired or not (an expired response still takes its
 * space). `bytes` is the length of the JSON text kept (the response and its input items), as `put` measured it.
 */
export interface StoredResponseStats {
  responses: number;
  bytes: number;
}

/** Which page of a response's input items: `after` an item id (the page starts past it, in `order`). */
export interface InputItemsQuery {
  limit: number;
  order: "asc" | "desc";
  after: string | null;
}

/** A page of input items, or `after_not_found` when the response has no item of the `after` id. */
export type InputItemsPage = { items: JsonObject[]; hasMore: boolean } | "after_not_found";

/**
 * What one key may keep, in responses and in bytes (as `put` measures them); 0 is no limit. Past either, the key's
 * oldest responses are removed, in the same commit as the put, until it is within both again. A put never removes
 * what it stores: the response just kept can always be continued, even when it alone is over the byte limit.
 */
export interface KeepLimits {
  responses: number;
  bytes: number;
}

export interface StoredResponseRepository {
  put(response: StoredResponse, limits?: KeepLimits): Promise<void>;
  /** The key's live response with its input items, or null (unknown, expired, deleted, or another key's). */
  get(keyId: string, id: string, now: number): Promise<StoredResponse | null>;
  /**
   * The key's live response object alone, as the caller got it (what `GET /v1/responses/{id}` serves), or null as
   * for `get`. Its input items are not read: a response may carry thousands, and the object does not include them.
   */
  responseObject(keyId: string, id: string, now: number): Promise<JsonObject | null>;
  /**
   * One page of a live response's input items, read by position: never the whole list (a response may carry
   * thousands). null when the key has no such live response.
   */
  inputItems(keyId: string, id: string, now: number, query: InputItemsQuery): Promise<InputItemsPage | null>;
  /** True when the key had it. */
  delete(keyId: string, id: string): Promise<boolean>;
  /** The key's live items (input or output) by id, for `item_reference`; unknown ids are absent. */
  items(keyId: string, ids: readonly string[], now: number): Promise<Map<string, JsonObject>>;
  /**
   * The size in bytes of each live item's stored JSON text, by id, without reading the items: what a request's
   * references would add to it is known before any item is read. Unknown ids are absent.
   */
  itemSizes(keyId: string, ids: readonly string[], now: number): Promise<Map<string, number>>;
  /**
   * Removes what expired before `now`; how many responses went. In chunks of PURGE_CHUNK, each its own statement,
   * with other work let in between: an hour of expired responses is tens of thousands of rows.
   */
  purgeExpired(now: number): Promise<number>;
  /**
   * What is kept in all, or for one key: the admin key page and `gantry keys usage` ask about one key at a time,
   * so they read that key's rows only (an index on key_id), not every key's.
   */
  stats(keyId?: string): Promise<StoredResponseStats>;
}

/**
 * How a stored response's items are kept. Its input items: in its own row as one JSON list (`inputList`) when the
 * list is short (at most INLINE_ITEMS items and INLINE_BYTES of text: a page of them reads that list, never a long
 * one), else one row each at positions 0 to n-1 (read back in order and a page at a time), as every response kept
 * before issue 32 has them (its list is then `[]`). Item rows by id besides, for `item_reference`, only for the items
 * whose ids do not name this response (named-item-ids.ts): an input item kept in the list at its position, an output
 * item at n + its index in the output. The items Gantry named (all of them in the usual case) are found through the
 * response's own row. `itemId` is null for an item without a string id (never found by reference).
 */
export interface ItemRow {
  position: number;
  itemId: string | null;
  item: string;
}

export const INLINE_ITEMS = 32;
export const INLINE_BYTES = 64 * 1024;

export function storedItemsOf(r: StoredResponse, inputTexts: readonly string[]): { inputList: string; rows: ItemRow[] } {
  const inline = inputTexts.length <= INLINE_ITEMS && listLength(inputTexts) <= INLINE_BYTES;
  const rows: ItemRow[] = [];
  if (!inline || !r.inputIdsNamed) {
    inputTexts.forEach((item, i) => {
      const id = itemIdOf(r.inputItems[i]!);
      if (!inline || (id !== null && responseOfItem(id) !== r.id)) rows.push({ position: i, itemId: id, item });
    });
  }
  const output = r.outputIdsNamed || !Array.isArray(r.response.output) ? [] : (r.response.output as JsonObject[]);
  output.forEach((it, i) => {
    const id = itemIdOf(it);
    if (id !== null && responseOfItem(id) !== r.id) rows.push({ position: inputTexts.length + i, itemId: id, item: JSON.stringify(it) });
  });
  return { inputList: inline && inputTexts.length > 0 ? `[${inputTexts.join(",")}]` : "[]", rows };
}

/** A page of input items from a list read whole (a short one, kept in the response's row): as the rows are paged. */
export function pageOfList(items: readonly JsonObject[], query: InputItemsQuery): InputItemsPage {
  const asc = query.order === "asc";
  let from = asc ? -1 : items.length;
  if (query.after !== null) {
    // The first of that id in the order asked for, as a list read whole would find it.
    const at = asc ? items.findIndex((it) => itemIdOf(it) === query.after) : items.findLastIndex((it) => itemIdOf(it) === query.after);
    if (at < 0) return "after_not_found";
    from = at;
  }
  const page = asc ? items.slice(from + 1, from + 2 + query.limit) : items.slice(Math.max(0, from - query.limit - 1), from).reverse();
  return { items: page.slice(0, query.limit), hasMore: page.length > query.limit };
}

/** The length of the JSON list of these item texts, as JSON.stringify of the list would write it. */
export function listLength(items: readonly string[]): number {
  let n = 2 + Math.max(0, items.length - 1);
  for (const item of items) n += item.length;
  return n;
}

/** An item's id as its row names it (items are stored with ids; null for one that has no string id). */
export function itemIdOf(item: JsonObject): string | null {
  return item !== null && typeof item === "object" && typeof item.id === "string" ? item.id : null;
}

/**
 * How many expired responses one statement of a purge removes. Deleting costs about what writing did (some 17 µs a
 * row in SQLite): one statement for 50,000 rows held SQLite's event loop for 0.84 s, and on PostgreSQL held the
 * totals rows of every key it touched until it committed, so those keys' puts waited for the whole purge. A chunk
 * of 256 holds either for a few milliseconds.
 */
export const PURGE_CHUNK = 256;

/** Whether a key's totals are over its limits (0: no limit). */
export function overLimits(totals: { responses: number; bytes: number }, limits: KeepLimits): boolean {
  return (limits.responses > 0 && totals.responses > limits.responses) || (limits.bytes > 0 && totals.bytes > limits.bytes);
}

/**
 * Eviction, once a key is over a limit, takes it a little under (a 64th of the limit, at most 64 responses): a key
 * at its limit then pays for eviction once every few dozen puts, on old rows that sit together, not a delete at
 * every put.
 */
function evictionTarget(limits: KeepLimits): KeepLimits {
  return {
    responses: limits.responses > 0 ? limits.responses - Math.min(64, Math.floor(limits.responses / 64)) : 0,
    bytes: limits.bytes > 0 ? limits.bytes - Math.floor(limits.bytes / 64) : 0,
  };
}

/**
 * The most responses one put removes from its key (about: eviction reads pages of up to 128). A key far over its
 * limits, because the operator lowered them, comes down this many a put instead of all at once: removing 19,000
 * responses in one put held SQLite's event loop for 0.7 s, and every big key's first put after the change did.
 */
export const EVICTION_PER_PUT = 512;

/** How many of a key's oldest responses to read for the next step of eviction: what it has too many, 1 to 128. */
export function evictionPageSize(totals: { responses: number }, limits: KeepLimits): number {
  const target = evictionTarget(limits);
  const over = target.responses > 0 ? totals.responses - target.responses : 0;
  return Math.min(128, Math.max(1, over));
}

/**
 * Eviction, one page of a key's oldest responses at a time (pure; every backend runs it after a put, when the key
 * is over a limit): which of the page go, so the key is within the eviction target again, stopping at one the put
 * just stored. `more` says whether to read the next page: still over, this page removed whole, and fewer than
 * EVICTION_PER_PUT gone since the key held `before` responses (its count when this put's eviction began).
 */
export function evictionOf(
  totals: { responses: number; bytes: number },
  limits: KeepLimits,
  fresh: ReadonlySet<string>,
  page: ReadonlyArray<{ id: string; bytes: number }>,
  before: number,
): { remove: string[]; totals: { responses: number; bytes: number }; more: boolean } {
  const target = evictionTarget(limits);
  const remove: string[] = [];
  let { responses, bytes } = totals;
  for (const row of page) {
    if (!overLimits({ responses, bytes }, target)) break;
    if (fresh.has(row.id)) return { remove, totals: { responses, bytes }, more: false };
    remove.push(row.id);
    responses--;
    bytes -= row.bytes;
  }
  const pageGone = remove.length === page.length && page.length > 0;
  const more = overLimits({ responses, bytes }, target) && pageGone && before - responses < EVICTION_PER_PUT;
  return { remove, totals: { responses, bytes }, more };
}
