/** The stored_responses row ↔ StoredResponse, and output items found in it, for every backend (each keeps its own SQL). */
import { responseOfItem, type JsonObject, type StoredResponse } from "../../gateway/responses/stored-response-repository";
import type { ColumnCodec, Row } from "./codec";

export function storedResponseFromRow(row: Row, c: ColumnCodec): StoredResponse {
  return {
    id: row.id as string,
    keyId: row.key_id as string,
    previousId: row.previous_id as string | null,
    model: row.model as string,
    account: (row.account as string | null | undefined) ?? null,
    createdAt: c.num(row.created_at),
    expiresAt: c.num(row.expires_at),
    response: JSON.parse(row.response as string),
    inputItems: JSON.parse(row.input_items as string),
    bytes: c.num(row.bytes),
  };
}

/** An output item found in its response's stored JSON, with the UTF-8 size of its JSON text (as a row's would be). */
export interface NamedItem {
  item: JsonObject;
  bytes: number;
}

/**
 * The ids among these that name their response (gateway/responses/named-item-ids.ts), by that response: each
 * response is read once, however many of its items are named.
 */
export function itemsByResponse(ids: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const id of new Set(ids)) {
    const response = responseOfItem(id);
    if (response === null) continue;
    const list = out.get(response);
    if (list) list.push(id);
    else out.set(response, [id]);
  }
  return out;
}

/**
 * The items with these ids in a response's row: its input list (kept there when short), then its output, the first
 * of each id (as the earliest row would be). How an item Gantry named is found without a row of its own.
 */
export function namedItemsIn(inputList: string, responseText: string, ids: readonly string[], into: Map<string, NamedItem>): void {
  const wanted = new Set(ids);
  const take = (items: unknown) => {
    if (!Array.isArray(items)) return;
    for (const item of items as JsonObject[]) {
      const id = item !== null && typeof item === "object" ? item.id : undefined;
      if (typeof id !== "string" || !wanted.has(id)) continue;
      wanted.delete(id);
      into.set(id, { item, bytes: Buffer.byteLength(JSON.stringify(item)) });
    }
  };
  if (inputList !== "[]") take(JSON.parse(inputList));
  if (wanted.size > 0) take((JSON.parse(responseText) as JsonObject).output);
}
