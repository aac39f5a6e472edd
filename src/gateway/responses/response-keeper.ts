/**
 * One `/v1/responses` call's side of keeping responses: the conversation it continues, the fresh ids its events
 * get, and, when it is kept, the response stored once it ended (before the caller receives its last event, so a
 * follow-up request can name it at once).
 */
import type { JsonObject, OutputItem, ResponseObject, ResponsesStreamEvent } from "../wire/responses-types";
import { TERMINAL_EVENT_TYPES } from "../wire/responses-types";
import type { Conversation } from "./conversation";
import { IdRewriter } from "./id-rewriter";
import { OBJECT_BEARING_TYPES, type UnreadEvent } from "../wire/stream-event";
import { idInEventText, type IdInText } from "./event-id-text";
import { responseTextOf } from "./response-text";
import type { StoredResponseRepository } from "./stored-response-repository";

const DAY_MS = 86_400_000;

/** What textIds says of an event that introduces no id (a delta, a part event). */
export const NO_ID = "no id";

export interface KeeperDeps {
  responses: StoredResponseRepository;
  config: { storedResponsesDays: number; storedResponsesPerKey: number; storedBytesPerKey: number };
  now: () => number;
}

/**
 * The finished response from a stream, cheaply: the terminal event's response, with its output taken from the
 * `output_item.done` events when the terminal one came with none (some upstreams send `output: []`). Deltas are not
 * looked at: every finished item arrives whole in its `done` event.
 */
class FinishedResponse {
  /**
   * The `output_item.done` events, parsed or still text, in order: read only when the terminal event comes without
   * the output (rarely), so the ones forwarded as text are not parsed for it.
   */
  private done: Array<() => ResponsesStreamEvent> = [];
  /** The terminal event as the upstream sent it (parsed): its keys are in the order of the text the caller got. */
  finalEvent: ResponsesStreamEvent | null = null;
  /** The terminal event's JSON as the caller got it (Gantry's ids in it). */
  finalJson: string | null = null;

  see(ev: ResponsesStreamEvent): void {
    if (ev.type === "response.output_item.done") this.done.push(() => ev);
    else if (TERMINAL_EVENT_TYPES.has(ev.type) && ev.response && typeof ev.response === "object") this.finalEvent ??= ev;
  }

  /** An event forwarded as its text (not parsed). */
  seeText(e: UnreadEvent): void {
    if (e.type === "response.output_item.done") this.done.push(() => e.ev);
  }

  private items(): OutputItem[] {
    const items: OutputItem[] = [];
    for (const read of this.done) {
      let ev: ResponsesStreamEvent;
      try {
        ev = read();
      } catch {
        continue; // forwarded as text, and not JSON after all: no item to keep from it
      }
      if (!ev.item || typeof ev.item !== "object") continue;
      const at = typeof ev.output_index === "number" && ev.output_index >= 0 && ev.output_index < 10_000 ? ev.output_index : items.length;
      items[at] = ev.item as OutputItem;
    }
    return items;
  }

  get ended(): boolean {
    return this.final !== null;
  }

  /** The terminal response carries the output (the usual case): it is the response, as the caller got it. */
  get whole(): boolean {
    return Array.isArray(this.final?.output) && this.final.output.length > 0;
  }

  /** The terminal event's response as the upstream sent it (ids not replaced), once it came. */
  get final(): JsonObject | null {
    return (this.finalEvent?.response as JsonObject | undefined) ?? null;
  }

  /** The response with the upstream's ids, its output from the items when the terminal event had none. */
  result(): ResponseObject {
    const final = this.final!;
    return { ...final, output: this.whole ? final.output : this.items().filter(Boolean) } as unknown as ResponseObject;
  }
}

/**
 * When a response was kept, in ms, strictly after the one this process kept before: a key's oldest responses are
 * the first to go when it keeps too much, and two kept in the same millisecond must still have an order.
 */
let lastKeptAt = 0;
function keptAt(now: number): number {
  lastKeptAt = Math.max(now, lastKeptAt + 1);
  return lastKeptAt;
}

export class ResponseKeeper {
  private readonly ids: IdRewriter;
  private readonly collector: FinishedResponse | null;

  constructor(
    private readonly deps: KeeperDeps,
    private readonly keyId: string,
    private readonly model: string,
    private readonly conversation: Conversation,
    private readonly keep: boolean,
    /** The upstream account that served the call, once known: kept with the response. */
    private readonly accountOf: () => string | null = () => null,
  ) {
    this.ids = new IdRewriter(conversation.previousId, keep, conversation.responseId, conversation.itemsNamed);
    this.collector = keep ? new FinishedResponse() : null;
  }

  /** Called with every event the caller is sent, in order. */
  see(ev: ResponsesStreamEvent): void {
    this.ids.learn(ev);
    this.collector?.see(ev);
  }

  /** An event's JSON text as the caller must see it: Gantry's ids, and what the response says of itself. */
  rewrite(ev: ResponsesStreamEvent, json: string): string {
    const out = this.ids.applyToEvent(ev, json);
    if (this.collector && this.collector.finalJson === null && TERMINAL_EVENT_TYPES.has(ev.type)) this.collector.finalJson = out;
    return out;
  }

  /**
   * Whether an unread event can go out as text, and the id it introduces: null when it must be read (parsed). Deltas
   * and part events can (they introduce none: `NO_ID`); one that carries the response or an item can when its one
   * id is found in its text.
   */
  textIds(e: UnreadEvent): IdInText | typeof NO_ID | null {
    if (!OBJECT_BEARING_TYPES.has(e.type)) return NO_ID;
    return idInEventText(e.data, e.type === "response.created" || e.type === "response.in_progress");
  }

  /** An unread event's text as the caller must see it (Gantry's ids), `found` what textIds said of it. */
  rewriteText(e: UnreadEvent, found: IdInText | typeof NO_ID): string {
    if (found === NO_ID) return this.rewriteDelta(e);
    this.ids.learnText(found);
    this.collector?.seeText(e);
    return this.ids.apply(e.data, found.response);
  }

  /**
   * A delta's or part event's text as the caller must see it (Gantry's item id), parsed only when its id is not
   * found as text: their one id is `item_id`.
   */
  private rewriteDelta(e: UnreadEvent): string {
    return this.ids.applyToDeltaText(e.data) ?? this.ids.applyToEvent(e.ev, e.data);
  }

  /** Stores the streamed response if it finished (completed or incomplete); resolves once it is committed. */
  async keepStreamed(): Promise<void> {
    const finished = this.collector;
    if (!finished?.ended) return;
    // The terminal event the caller got already has Gantry's ids: parsing its text is the response, where
    // rewriting the object again would serialise and parse it once more.
    if (finished.whole && finished.finalJson !== null) {
      // The usual case, without parsing the event again: its text is cut from what the caller got, and what the
      // store must know of it (status, ids, whether it says what stamp writes) is read off the upstream's response
      // parsed before, since rewriting replaces ids and two flags in it and nothing else.
      const upstream = finished.final!;
      const text = responseTextOf(finished.finalJson, finished.finalEvent as unknown as Record<string, unknown>);
      if (text !== null && this.ids.textStamped(upstream)) {
        if (!this.keep || (upstream.status !== "completed" && upstream.status !== "incomplete")) return;
        return this.save(() => JSON.parse(text) as JsonObject, text, this.ids.outputNamed(upstream.output as unknown[]));
      }
      const parsed = JSON.parse(finished.finalJson) as { response?: unknown };
      if (parsed.response && typeof parsed.response === "object") {
        const response = parsed.response as JsonObject;
        // Its text is kept as is when it already says what stamp would write (the usual case).
        const text = this.ids.stamped(response) ? responseTextOf(finished.finalJson, parsed) : null;
        return this.store(this.ids.stamp(response), text);
      }
    }
    await this.finish(finished.result());
  }

  /** A finished response with Gantry's ids; stored (when kept, and completed or incomplete) before it is returned. */
  async finish(response: ResponseObject): Promise<ResponseObject> {
    const out = this.ids.applyToResponse(response as unknown as JsonObject);
    await this.store(out);
    return out as unknown as ResponseObject;
  }

  /** Saves a response with Gantry's ids, when kept and finished (completed or incomplete). */
  private async store(response: JsonObject, text: string | null = null): Promise<void> {
    if (this.keep && (response.status === "completed" || response.status === "incomplete")) await this.save(() => response, text);
  }

  /**
   * Saves a stamped response (its id is this one's), read by `response` only if the store reads it: SQLite and
   * PostgreSQL write `text`, the response's JSON as the caller got it, when it is known. `outputIdsNamed`: every
   * output item's id names this response (StoredResponse.outputIdsNamed).
   */
  private async save(response: () => JsonObject, text: string | null, outputIdsNamed = false): Promise<void> {
    const now = this.deps.now();
    let read: JsonObject | null = null;
    await this.deps.responses.put({
      id: this.ids.responseId,
      keyId: this.keyId,
      previousId: this.conversation.previousId,
      model: this.model,
      account: this.accountOf(),
      createdAt: keptAt(now),
      expiresAt: now + this.deps.config.storedResponsesDays * DAY_MS,
      get response() {
        return (read ??= response());
      },
      responseJson: text ?? undefined,
      outputIdsNamed: outputIdsNamed || undefined,
      // Every item this turn added got an id named after the response (none was the caller's or a reference).
      inputIdsNamed: this.conversation.itemsNamed === this.conversation.newItems.length || undefined,
      inputItems: this.conversation.newItems,
    }, { responses: this.deps.config.storedResponsesPerKey, bytes: this.deps.config.storedBytesPerKey });
  }
}
