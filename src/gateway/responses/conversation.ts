/**
 * A Responses request made whole before it goes to an upstream that stores nothing: `previous_response_id` becomes
 * the conversation so far (each earlier response's new input items and output, oldest first), `item_reference`
 * items become the items they name, and this turn's items get ids so they can be listed and referred to later.
 */
import { AppError } from "../../errors";
import type { JsonObject } from "../wire/responses-types";
import { checkResponsesInput } from "../translate/request-checks";
import type { StoredResponse, StoredResponseRepository } from "./stored-response-repository";
import { namedItemId } from "./named-item-ids";

/** A chain longer than this is refused rather than walked (a conversation of 10,000 turns is not one). */
const MAX_CHAIN = 10_000;

export interface Conversation {
  /** The whole input for the upstream: the earlier turns, then this one's items. */
  input: JsonObject[];
  /** This turn's items, references resolved, each with an id: what the stored response keeps. */
  newItems: JsonObject[];
  previousId: string | null;
  /** The upstream account that produced the response continued (null: none, or not known). */
  previousAccount: string | null;
  /**
   * The encrypted reasoning in the earlier turns, by its `encrypted_content`, and the account that produced it: only
   * that account can read it, so a continuation sent elsewhere leaves those items out. Empty when there is none.
   */
  encryptedOwners: Map<string, string | null>;
  /**
   * The id this turn's response will have: minted before the upstream answers, so that the ids given to this
   * turn's items name it (named-item-ids.ts) and need no row of their own when it is kept.
   */
  responseId: string;
  /** How many item ids were named after it here: its output items are numbered from there. */
  itemsNamed: number;
}

/**
 * A new id with the prefix the API uses for the kind of thing (resp, msg, fc, rs, …), unique whatever the upstream
 * sends: the time in ms (12 hex digits), then 80 random bits. Time first keeps the stores' indexes appending at
 * their end instead of writing all over them (random keys made every insert touch a different page).
 */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, "0")}${randomHex(10)}`;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
/** Random bytes drawn a pool at a time: a kept streamed response mints several ids, a system call each otherwise. */
const pool = new Uint8Array(4096);
let used = pool.length;

/** `bytes` random bytes (at most the pool's size), as lowercase hex. */
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let out = "";
  for (const end = used + bytes; used < end; used++) out += HEX[pool[used]!];
  return out;
}

const ITEM_PREFIX: Record<string, string> = {
  message: "msg",
  function_call: "fc",
  function_call_output: "fco",
  reasoning: "rs",
};

function prefixOf(item: JsonObject): string {
  const type = typeof item.type === "string" ? item.type : item.role !== undefined ? "message" : "item";
  return Object.hasOwn(ITEM_PREFIX, type) ? ITEM_PREFIX[type]! : "item";
}

/** A message as the API lists it: typed, its text as a part (a bare `{role, content: "…"}` is shorthand for this). */
function canonical(item: JsonObject): JsonObject {
  if (item.type !== undefined || typeof item.role !== "string") return item;
  const content = typeof item.content === "string" ? [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content }] : item.content;
  return { type: "message", ...item, content };
}

function asItems(input: unknown): JsonObject[] {
  if (typeof input === "string") return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  return Array.isArray(input) ? (input as JsonObject[]) : [];
}

/**
 * What the request made whole may be: `maxBytes` (GANTRY_MAX_BODY_BYTES) holds for what is sent upstream as for what
 * was received, and `bodyBytes` of it are the request as it came.
 */
export interface ConversationBounds {
  maxBytes: number;
  bodyBytes: number;
  /** The most items the whole input may have (GANTRY_MAX_INPUT_ITEMS), earlier turns included. */
  maxItems: number;
}

function tooLarge(bytes: number, bounds: ConversationBounds, what: string, param: string): AppError {
  return new AppError(
    "invalid_request",
    `The request with ${what} would be at least ${bytes} bytes, above the limit of ${bounds.maxBytes} bytes for what is sent upstream.`,
    { param, rawCode: "request_too_large" },
  );
}

export async function buildConversation(
  repo: StoredResponseRepository,
  keyId: string,
  body: JsonObject,
  now: number,
  bounds: ConversationBounds,
): Promise<Conversation> {
  // Checked here as well as when normalised: the input made whole is always an array, whatever this turn sent.
  checkResponsesInput(body.input);
  const items = asItems(body.input);
  const found = await resolveReferences(repo, keyId, items, now, bounds);
  let bytes = bounds.bodyBytes + found.bytes;
  let count = items.length;
  const responseId = newId("resp");
  let itemsNamed = 0;
  const newItems = items.map((it) => {
    if (it === null || typeof it !== "object") return it;
    if (it.type === "item_reference") return found.items.get(String(it.id))!;
    const item = canonical(it);
    return typeof item.id === "string" ? item : { id: namedItemId(responseId, prefixOf(item), itemsNamed++), ...item };
  });

  const previousId = typeof body.previous_response_id === "string" && body.previous_response_id !== "" ? body.previous_response_id : null;
  const earlier: StoredResponse[] = [];
  for (let id = previousId; id !== null; ) {
    const r = await repo.get(keyId, id, now);
    if (!r) {
      // The one named by the caller, or one further back that expired or was deleted: either way, not a silent answer.
      throw new AppError("invalid_request", `Previous response with id '${id.slice(0, 100)}' not found.`, {
        param: "previous_response_id",
        rawCode: "previous_response_not_found",
      });
    }
    earlier.push(r);
    if (earlier.length > MAX_CHAIN) throw new AppError("invalid_request", "The conversation is too long to continue.", { param: "previous_response_id" });
    // Each turn's kept size stands for what it adds: the walk stops at the turn that makes it too large.
    bytes += r.bytes ?? 0;
    if (bytes > bounds.maxBytes) throw tooLarge(bytes, bounds, "the conversation it continues", "previous_response_id");
    count += r.inputItems.length + (Array.isArray(r.response.output) ? r.response.output.length : 0);
    if (count > bounds.maxItems) {
      throw new AppError("invalid_request", `The conversation it continues would send more than ${bounds.maxItems} input items upstream.`, {
        param: "previous_response_id",
        rawCode: "too_many_items",
      });
    }
    id = r.previousId;
  }
  const previousAccount = earlier[0]?.account ?? null;
  const encryptedOwners = new Map<string, string | null>();
  const history = earlier.reverse().flatMap((r) => {
    const output = Array.isArray(r.response.output) ? (r.response.output as JsonObject[]) : [];
    for (const it of output) if (it && it.type === "reasoning" && typeof it.encrypted_content === "string") encryptedOwners.set(it.encrypted_content, r.account ?? null);
    return [...r.inputItems, ...output];
  });
  return { input: [...history, ...newItems], newItems, previousId, previousAccount, encryptedOwners, responseId, itemsNamed };
}

/**
 * The items this turn's `item_reference`s name, each read once however often it is named, and what naming them adds
 * to the request: every reference is one copy of its item in what goes upstream (and in what is kept), so the sizes
 * are summed per reference, from the sizes as stored, before any item is read. A request whose references would make
 * it larger than a body may be is refused there: a 700 KB request naming one item thousands of times used to be
 * built whole, gigabytes of it.
 */
async function resolveReferences(
  repo: StoredResponseRepository,
  keyId: string,
  items: JsonObject[],
  now: number,
  bounds: ConversationBounds,
): Promise<{ items: Map<string, JsonObject>; bytes: number }> {
  const times = new Map<string, number>();
  for (const it of items) {
    if (it === null || typeof it !== "object" || it.type !== "item_reference") continue;
    const id = String(it.id);
    times.set(id, (times.get(id) ?? 0) + 1);
  }
  if (times.size === 0) return { items: new Map(), bytes: 0 };
  const ids = [...times.keys()];
  const sizes = await repo.itemSizes(keyId, ids, now);
  let bytes = 0;
  for (const [id, n] of times) {
    const size = sizes.get(id);
    if (size === undefined) throw notFound(id);
    bytes += size * n;
  }
  if (bounds.bodyBytes + bytes > bounds.maxBytes) throw tooLarge(bounds.bodyBytes + bytes, bounds, "its item_reference items in place", "input");
  const found = await repo.items(keyId, ids, now);
  // One that expired or was deleted between the two reads.
  for (const id of ids) if (!found.has(id)) throw notFound(id);
  return { items: found, bytes };
}

function notFound(id: string): AppError {
  return new AppError("invalid_request", `Item with id '${id.slice(0, 100)}' not found.`, { param: "input", rawCode: "item_not_found" });
}
