/**
 * The announcements' domain types: an announcement and its fields (what the input rules resolve and the repository
 * port, announcement-repository.ts, stores), the document and its query. The pure builders turn announcements into
 * the public document of spec/site-api.md. Declared here, with the rules, so that rules/ imports nothing of its parent.
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

export type Surface = "client" | "home";

/** One item of the announcement document: exactly the spec's fields, texts already localised. */
export type AnnouncementView = Omit<Announcement, "app" | "locales">;

/** GET /api/v1/announcements after normalisation. Empty strings = not given. */
export interface AnnouncementQuery {
  app: string;
  /** Normalised (no leading `v`), or "" when the client sent none. */
  version: string;
  /** Lowercase, `-`-separated language tag, or "". */
  locale: string;
  surface: Surface;
  /** `test=1` or `staging=1` was given. */
  includeTest: boolean;
}

export interface AnnouncementDocument {
  schema: "app.announcements.v1";
  surface: Surface;
  announcements: AnnouncementView[];
}
