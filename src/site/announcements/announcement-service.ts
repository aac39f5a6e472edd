/**
 * Announcement operations shared by the admin API and the CLI (so both apply the same rules), and the public
 * document. Validation is in announcement-input.ts, the filter in announcements.ts, storage behind
 * announcement-repository.ts.
 */
import { AppError } from "../../errors";
import type { ChangeFeed } from "../../state/change-feed";
import { buildAnnouncementDocument, nextVisibilityChange } from "./rules/announcements";
import { DocumentCache, type RenderedDocument } from "../http/document-cache";
import { reshowKey, resolveAnnouncement, type AnnouncementInput } from "./rules/announcement-input";
import type { AnnouncementRepository, StoredAnnouncement } from "./announcement-repository";
import type { AnnouncementDocument, AnnouncementQuery } from "./rules/announcement-types";

/**
 * 8 random bytes in hex: opaque to clients, practically never equal to an earlier key, and safe on a command
 * line (base64url could start with `-` and read as an option).
 */
export function newDismissKey(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
}

export class AnnouncementService {
  private readonly documents: DocumentCache;

  constructor(
    private readonly store: AnnouncementRepository,
    changes: ChangeFeed,
    private readonly now: () => number,
  ) {
    this.documents = new DocumentCache(() => changes.version("announcements"));
  }

  list(): Promise<StoredAnnouncement[]> {
    return this.store.list();
  }

  /** Ids are positive integers; anything else is simply not found (the CLI and the API pass raw text). */
  async get(id: number | string): Promise<StoredAnnouncement> {
    const n = typeof id === "number" ? id : /^\d{1,15}$/.test(id.trim()) ? Number(id.trim()) : Number.NaN;
    const item = Number.isSafeInteger(n) ? await this.store.get(n) : null;
    if (!item) throw new AppError("not_found", `No announcement '${String(id).slice(0, 40)}'.`);
    return item;
  }

  create(input: AnnouncementInput): Promise<StoredAnnouncement> {
    const now = this.now();
    return this.store.insert(resolveAnnouncement(input, null, { now, newDismissKey }), now);
  }

  async update(id: number | string, input: AnnouncementInput): Promise<StoredAnnouncement> {
    const base = await this.get(id);
    const now = this.now();
    const fields = resolveAnnouncement(input, base, { now, newDismissKey });
    const updated = await this.store.update(base.id, fields, now);
    if (!updated) throw new AppError("not_found", `No announcement '${id}'.`);
    return updated;
  }

  /** A new dismissKey (given, or generated): clients that dismissed the item show it again. */
  async reshow(id: number | string, dismissKey?: string): Promise<StoredAnnouncement> {
    const base = await this.get(id);
    return this.update(base.id, { dismissKey: reshowKey(base.dismissKey, dismissKey, newDismissKey) });
  }

  async delete(id: number | string): Promise<StoredAnnouncement> {
    const item = await this.get(id);
    await this.store.delete(item.id);
    return item;
  }

  /** The public document, built from the table (the CLI prints it; the HTTP route uses `rendered`). */
  async document(query: AnnouncementQuery): Promise<AnnouncementDocument> {
    return buildAnnouncementDocument(await this.store.list(), query, this.now());
  }

  /**
   * The document serialised and tagged, kept per query until an announcement changes (any process) or a time
   * window opens or closes: the route answers without reading the table or hashing on every request.
   */
  rendered(query: AnnouncementQuery): RenderedDocument | Promise<RenderedDocument> {
    const key = `${query.surface}\n${query.app}\n${query.version}\n${query.locale}\n${query.includeTest ? 1 : 0}`;
    const now = this.now();
    return this.documents.getUntil(key, now, async () => {
      const items = await this.store.list();
      return { value: buildAnnouncementDocument(items, query, now), expiresAt: nextVisibilityChange(items, now) };
    });
  }
}
