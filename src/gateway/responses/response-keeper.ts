/**
 * One `/v1/responses` call's side of keeping responses: the conversation it continues, the fresh ids its events
 * get, and, when it is kept, the response stored once it ended (before the caller receives its last event, so a
 * follow-up request can name it at once).
 */
import type { JsonObject, ResponseObject, ResponsesStreamEvent } from "../responses-types";
import { createResponseCollector, type ResponseCollector } from "../stream/collect";
import type { Conversation } from "./conversation";
import { IdRewriter } from "./id-rewriter";
import type { StoredResponseRepository } from "./stored-response-repository";

const DAY_MS = 86_400_000;

export interface KeeperDeps {
  responses: StoredResponseRepository;
  config: { storedResponsesDays: number };
  now: () => number;
}

export class ResponseKeeper {
  private readonly ids: IdRewriter;
  private readonly collector: ResponseCollector | null;

  constructor(
    private readonly deps: KeeperDeps,
    private readonly keyId: string,
    private readonly model: string,
    private readonly conversation: Conversation,
    private readonly keep: boolean,
  ) {
    this.ids = new IdRewriter(conversation.previousId, keep);
    this.collector = keep ? createResponseCollector() : null;
  }

  /** Called with every event the caller is sent, in order. */
  see(ev: ResponsesStreamEvent): void {
    this.ids.learn(ev);
    this.collector?.push(ev);
  }

  /** An encoded event (or several) as the caller must see it: Gantry's ids. */
  rewrite(text: string): string {
    return this.ids.apply(text);
  }

  /** Stores the streamed response if it finished (completed or incomplete); resolves once it is committed. */
  async keepStreamed(): Promise<void> {
    if (!this.collector || !this.collector.terminal) return;
    await this.store(this.collector.result());
  }

  /** A collected (non-streamed) response, rewritten; stored when kept. */
  async finish(response: ResponseObject): Promise<ResponseObject> {
    const out = this.ids.applyToResponse(response as unknown as JsonObject) as unknown as ResponseObject;
    if (this.keep && (out.status === "completed" || out.status === "incomplete")) await this.save(out as unknown as JsonObject);
    return out;
  }

  private async store(response: ResponseObject): Promise<void> {
    if (response.status !== "completed" && response.status !== "incomplete") return;
    await this.save(this.ids.applyToResponse(response as unknown as JsonObject));
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
