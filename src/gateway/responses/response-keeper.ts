/**
 * One `/v1/responses` call's side of keeping responses: the conversation it continues, the fresh ids its events
 * get, and, when it is kept, the response stored once it ended (before the caller receives its last event, so a
 * follow-up request can name it at once).
 */
import type { JsonObject, OutputItem, ResponseObject, ResponsesStreamEvent } from "../responses-types";
import { TERMINAL_EVENT_TYPES } from "../responses-types";
import type { Conversation } from "./conversation";
import { IdRewriter } from "./id-rewriter";
import type { StoredResponseRepository } from "./stored-response-repository";

const DAY_MS = 86_400_000;

export interface KeeperDeps {
  responses: StoredResponseRepository;
  config: { storedResponsesDays: number };
  now: () => number;
}

/**
 * The finished response from a stream, cheaply: the terminal event's response, with its output taken from the
 * `output_item.done` events when the terminal one came with none (some upstreams send `output: []`). Deltas are not
 * looked at: every finished item arrives whole in its `done` event.
 */
class FinishedResponse {
  private items: OutputItem[] = [];
  private final: JsonObject | null = null;

  see(ev: ResponsesStreamEvent): void {
    if (ev.type === "response.output_item.done" && ev.item && typeof ev.item === "object") {
      const at = typeof ev.output_index === "number" && ev.output_index >= 0 && ev.output_index < 10_000 ? ev.output_index : this.items.length;
      this.items[at] = ev.item as OutputItem;
    } else if (TERMINAL_EVENT_TYPES.has(ev.type) && ev.response && typeof ev.response === "object") {
      this.final ??= ev.response as JsonObject;
    }
  }

  get ended(): boolean {
    return this.final !== null;
  }

  result(): ResponseObject {
    const final = this.final!;
    const output = Array.isArray(final.output) && final.output.length > 0 ? final.output : this.items.filter(Boolean);
    return { ...final, output } as unknown as ResponseObject;
  }
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
  ) {
    this.ids = new IdRewriter(conversation.previousId, keep);
    this.collector = keep ? new FinishedResponse() : null;
  }

  /** Called with every event the caller is sent, in order. */
  see(ev: ResponsesStreamEvent): void {
    this.ids.learn(ev);
    this.collector?.see(ev);
  }

  /** An event's JSON or SSE text as the caller must see it: Gantry's ids (`withResponse`: it carries the response). */
  rewrite(text: string, withResponse = true): string {
    return this.ids.apply(text, withResponse);
  }

  /** Stores the streamed response if it finished (completed or incomplete); resolves once it is committed. */
  async keepStreamed(): Promise<void> {
    if (this.collector?.ended) await this.finish(this.collector.result());
  }

  /** A finished response with Gantry's ids; stored (when kept, and completed or incomplete) before it is returned. */
  async finish(response: ResponseObject): Promise<ResponseObject> {
    const out = this.ids.applyToResponse(response as unknown as JsonObject) as unknown as ResponseObject;
    if (this.keep && (out.status === "completed" || out.status === "incomplete")) await this.save(out as unknown as JsonObject);
    return out;
  }

  private async save(response: JsonObject): Promise<void> {
    const now = this.deps.now();
    await this.deps.responses.put({
      id: String(response.id),
      keyId: this.keyId,
      previousId: this.conversation.previousId,
      model: this.model,
      createdAt: now,
      expiresAt: now + this.deps.config.storedResponsesDays * DAY_MS,
      response,
      inputItems: this.conversation.newItems,
    });
  }
}
