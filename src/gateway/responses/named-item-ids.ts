/**
 * Item ids that name their response: `<prefix>_<the response id's 32 hex digits><the item's number, 4 or more hex
 * digits>`, e.g. `msg_018f…c2a0001` for the second item named after `resp_018f…c2a`. The items Gantry gives ids to
 * in a kept response (the input items its request added without one, then its output items) are numbered in the
 * order they get them. An `item_reference` to such an id is found in the row of the response it names (its input
 * list or its output), so these items need no row of their own; the list and the output are searched by id, so an
 * item that ended elsewhere in them is still found.
 *
 * Ids Gantry issued before (`<prefix>_` and 32 hex digits) are too short to decode: they are found by their rows.
 */
/** The hex digits after `resp_` of a response id Gantry mints (conversation.ts newId): 12 of time, 20 random. */
const RESPONSE_DIGITS = 32;
const NUMBER_DIGITS = 4;

/** The id of the `n`th item named after `responseId` (a `resp_` id Gantry minted), with `prefix`. */
export function namedItemId(responseId: string, prefix: string, n: number): string {
  return `${prefix}_${responseId.slice(5)}${n.toString(16).padStart(NUMBER_DIGITS, "0")}`;
}

/** The response an item id names, or null for any other id (an older one, a caller's, an upstream's). */
export function responseOfItem(id: string): string | null {
  const cut = id.indexOf("_");
  if (cut <= 0 || cut > 8) return null;
  const digits = id.length - cut - 1;
  if (digits < RESPONSE_DIGITS + NUMBER_DIGITS || digits > RESPONSE_DIGITS + 12) return null;
  for (let i = cut + 1; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return null;
  }
  return "resp_" + id.slice(cut + 1, cut + 1 + RESPONSE_DIGITS);
}
