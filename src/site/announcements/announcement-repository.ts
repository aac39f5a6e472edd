/**
 * Announcements as stored: the announcements feature's port for them. The embedded default is SQLite
 * (store/sqlite/announcements.ts). No rules live here (see rules/announcement-input.ts); every committed change moves
 * the change feed's "announcements" topic, which the rendered documents follow. The announcement itself is a type of
 * the rules (rules/announcement-types.ts), which read it and may import nothing of this folder; it is re-exported
 * here so an implementation needs the port alone.
 */
import type { AnnouncementFields, Announcement } from "./rules/announcement-types";

export type { Announcement, AnnouncementFields, AnnouncementLevel, LocaleText, TargetSurface } from "./rules/announcement-types";

export type StoredAnnouncement = Announcement & { createdAt: number; updatedAt: number };

export interface AnnouncementRepository {
  /** All announcements, oldest first. */
  list(): Promise<StoredAnnouncement[]>;
  get(id: number): Promise<StoredAnnouncement | null>;
  insert(fields: AnnouncementFields, now: number): Promise<StoredAnnouncement>;
  /** Replaces every field; null when there is no such announcement. */
  update(id: number, fields: AnnouncementFields, now: number): Promise<StoredAnnouncement | null>;
  /** False when there was no such announcement. */
  delete(id: number): Promise<boolean>;
}
