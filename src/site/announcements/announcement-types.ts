/**
 * Shapes of the announcement document and its query (the stored announcement is the repository port's,
 * announcement-repository.ts). The pure builders turn rows into the public document of spec/site-api.md.
 */
import type { Announcement } from "./announcement-repository";

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
