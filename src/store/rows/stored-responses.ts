/** The stored_responses row ↔ StoredResponse, for every backend (each keeps its own SQL). */
import type { StoredResponse } from "../../gateway/responses/stored-response-repository";
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
