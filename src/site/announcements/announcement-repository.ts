/**
 * Announcements as stored: the announcements feature's port for them. The embedded default is SQLite
 * (store/sqlite/announcements.ts). No rules live here (see announcement-input.ts); every committed change moves
 * the change feed's "announcements" topic, which the rendered documents follow.
 */
export type TargetSurface = "client" | "home" | "all";

/** Display order: most severe first. The spec shows `warning`; the set is ours. */
export type AnnouncementLevel = "critical" | "warning" | "info";

export interface LocaleText {
  title?: string;
  body?: string;
  ctaText?: string;
}

export interface Announcement {
  id: number;
  /** Open set (spec shows `modal`); passed through to clients unchanged. */
  type: string;
  displayType: string;
  targetSurface: TargetSurface;
  level: AnnouncementLevel;
  title: string;
  body: string;
  ctaText: string;
  ctaUrl: string;
  /** "" = no bound. */
  minVersion: string;
  maxVersion: string;
  /** ISO 8601 UTC; "" = shown from the beginning of time. */
  startAt: string;
  /** ISO 8601 UTC; "" = never expires. */
  expiresAt: string;
  dismissKey: string;
  testOnly: boolean;
  /** Target app name; "" = any app. */
  app: string;
  /** Keyed by language tag (`zh-CN`, `zh`, `en`); any case, `_` or `-`. */
  locales: Record<string, LocaleText>;
}

/** Everything of an announcement but its id: what the rules resolve and the repository writes. */
export type AnnouncementFields = Omit<Announcement, "id">;

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
