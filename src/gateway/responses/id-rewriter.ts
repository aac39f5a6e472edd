/**
 * Gantry's own ids for a stored response and its output items. An upstream that stores nothing may reuse ids (the
 * test upstream numbers items from 0 in every response), and a caller that refers to an item or a response later
 * must name exactly one: so each upstream id met in this response's events gets a fresh one, and the events the
 * caller receives say the fresh one.
 *
 * Output item ids name the response (named-item-ids.ts), whose id is minted with the conversation, before any event:
 * an `item_reference` to one later finds it in that response's output.
 *
 * Replacing is done on the event's JSON text: `"old"` (with its quotes) can only be that string value, since a quote
 * inside a JSON string is escaped. Events Gantry forwards untouched stay unparsed-and-unserialised.
 */
import type { JsonObject, ResponsesStreamEvent } from "../wire/responses-types";
import { newId } from "./conversation";
import { namedItemId, responseOfItem } from "./named-item-ids";

export class IdRewriter {
  /** Upstream id -> the pair quoted as in JSON: `"old"` and Gantry's `"fresh"`. */
  private readonly ids = new Map<string, [string, string]>();
  /** Item ids as they appear in a delta's JSON text: `"item_id":"old"` and `"item_id":"fresh"`, newest first. */
  private itemIdFields: Array<[string, string]> = [];
  /** Whether the upstream's response id was met (later different ones get ids of their own, as before). */
  private responseMet = false;

  constructor(
    private readonly previousId: string | null,
    /** The response is kept: the caller is told `store: true` (the upstream was asked for false). */
    private readonly kept: boolean,
    /** Gantry's id for the response, minted with the conversation: its output item ids name it. */
    readonly responseId: string,
    /** Item ids already named after it (this turn's input items): the next one's number. */
    private minted: number,
  ) {}

  private map(old: unknown, prefix: string): void {
    if (typeof old !== "string" || old === "" || old.length > 200 || this.ids.has(old)) return;
    const own = prefix === "resp" && !this.responseMet;
    const fresh = own ? this.responseId : prefix === "resp" ? newId(prefix) : namedItemId(this.responseId, prefix, this.minted++);
    this.ids.set(old, [JSON.stringify(old), JSON.stringify(fresh)]);
    if (own) this.responseMet = true;
    else this.itemIdFields.unshift(['"item_id":' + JSON.stringify(old), '"item_id":' + JSON.stringify(fresh)]);
  }

  /**
   * Learns the one id an event's JSON text introduces, found there by `idInText` (nothing when null): what `learn`
   * does with the parsed event.
   */
  learnText(found: { id: string; response: boolean } | null): void {
    if (found) this.map(found.id, found.response ? "resp" : this.itemPrefix(found.id));
  }

  private itemPrefix(id: string): string {
    const cut = id.indexOf("_");
    return cut > 0 && cut <= 8 ? id.slice(0, cut) : "item";
  }

  /** Learns the ids an event introduces (the response's, an item's). */
  learn(ev: ResponsesStreamEvent): void {
    const response = ev.response as JsonObject | undefined;
    if (response && typeof response === "object") {
      this.map(response.id, "resp");
      if (Array.isArray(response.output)) for (const it of response.output) if (it && typeof it.id === "string") this.map(it.id, this.itemPrefix(it.id));
    }
    const item = ev.item as JsonObject | undefined;
    if (item && typeof item === "object" && typeof item.id === "string") this.map(item.id, this.itemPrefix(item.id));
  }

  /**
   * An event's JSON text with every known upstream id replaced; `withResponse` (the event carries the response
   * object): also `store` and `previous_response_id` as the caller must see them.
   */
  apply(text: string, withResponse = true): string {
    let out = text;
    for (const [old, fresh] of this.ids.values()) out = replaceLiteral(out, old, fresh);
    if (!withResponse) return out;
    // The same literal search as for ids: measured about twice as fast as includes and replaceAll on these texts.
    if (this.kept) out = replaceLiteral(out, '"store":false', '"store":true');
    if (this.previousId !== null) out = replaceLiteral(out, '"previous_response_id":null', `"previous_response_id":${JSON.stringify(this.previousId)}`);
    return out;
  }

  /**
   * `apply` for one stream event. Most events are deltas and part events whose one id is `item_id` (no `item`, no
   * `response`): for those only that id is looked for, where scanning for every known id cost about 50 µs a
   * streamed request, the largest part of keeping it.
   */
  applyToEvent(ev: ResponsesStreamEvent, text: string): string {
    if (ev.response !== undefined) return this.apply(text, true);
    if (ev.item !== undefined || ev.response_id !== undefined) return this.apply(text, false);
    const pair = typeof ev.item_id === "string" ? this.ids.get(ev.item_id) : undefined;
    return pair ? replaceLiteral(text, pair[0], pair[1]) : text;
  }

  /**
   * A delta's JSON text (unparsed) with its `item_id` replaced, or null when its id is not found in the compact form
   * (`"item_id":"…"`, what OpenAI and Gantry's simulator write): the caller then parses it and uses applyToEvent.
   * The item being streamed is the newest one learnt, so the first field tried is nearly always the one.
   */
  applyToDeltaText(text: string): string | null {
    for (const [old, fresh] of this.itemIdFields) {
      const at = text.indexOf(old);
      if (at >= 0) return text.slice(0, at) + fresh + text.slice(at + old.length);
    }
    return text.includes('"item_id"') ? null : text;
  }

  /** A whole response object, rewritten the same way (once per response, for storing and non-streamed replies). */
  applyToResponse<T extends JsonObject>(response: T): T {
    this.learn({ type: "response.completed", response });
    return this.stamp(JSON.parse(this.apply(JSON.stringify(response))) as T);
  }

  /**
   * What a response whose ids were already replaced (it was parsed from a rewritten event) must say besides: its
   * id, even if the upstream gave none, the response it continues, and `store` as the caller asked.
   */
  /** Whether `stamp` would change nothing in a response parsed from a rewritten event. */
  stamped(out: JsonObject): boolean {
    return out.id === this.responseId && (this.previousId === null || out.previous_response_id === this.previousId) && (!this.kept || out.store === true);
  }

  /**
   * `stamped` for the rewritten text of a response, judged from the upstream's response before rewriting (`upstream`,
   * parsed from the upstream's event): its id is replaced by this response's, a `previous_response_id` of null by the
   * one continued, and a `store` of false by true, so the text says what `stamp` would write when those are there.
   */
  textStamped(upstream: JsonObject): boolean {
    const pair = typeof upstream.id === "string" ? this.ids.get(upstream.id) : undefined;
    if (pair === undefined || pair[1] !== `"${this.responseId}"`) return false;
    if (this.previousId !== null && upstream.previous_response_id !== null) return false;
    return !this.kept || upstream.store === false || upstream.store === true;
  }

  /**
   * Whether every output item of the upstream's response has, as the caller got it, an id that names this response
   * (or none): then none of them needs a row of its own when it is kept.
   */
  outputNamed(output: readonly unknown[]): boolean {
    for (const it of output) {
      if (it === null || typeof it !== "object") continue;
      const id = (it as JsonObject).id;
      if (typeof id !== "string") continue;
      const pair = this.ids.get(id);
      if (pair === undefined || responseOfItem(pair[1].slice(1, -1)) !== this.responseId) return false;
    }
    return true;
  }

  stamp<T extends JsonObject>(out: T): T {
    (out as JsonObject).id = this.responseId;
    if (this.previousId !== null) (out as JsonObject).previous_response_id = this.previousId;
    if (this.kept) (out as JsonObject).store = true;
    return out;
  }
}

/** `text` with every `old` replaced by `fresh`: a literal search (measured cheaper than `replaceAll` and a RegExp). */
function replaceLiteral(text: string, old: string, fresh: string): string {
  let at = text.indexOf(old);
  if (at < 0) return text;
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at) + fresh;
    from = at + old.length;
    at = text.indexOf(old, from);
  }
  return out + text.slice(from);
}
