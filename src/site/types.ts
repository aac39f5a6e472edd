/**
 * Data shapes of the update and announcement site. Store rows are mapped into these; the pure builders in
 * this folder turn them into the public documents of spec/site-api.md.
 */

// The release shapes live with the releases feature (its repository port); re-exported for the builders here.
export type { Arch, Asset, AssetSource, Platform, Release } from "./releases/release-repository";
import type { Arch, Asset, Platform } from "./releases/release-repository";

export type AssetWithRecommendation = Asset & { recommended: boolean };

/** Filters of GET /api/v1/latest after normalisation; absent = no filter. */
export interface LatestQuery {
  platform?: Platform;
  arch?: Arch;
  fileType?: string;
}

export type Surface = "client" | "home";

// The stored announcement shapes live with the announcements feature (its repository port).
export type { Announcement, AnnouncementLevel, LocaleText, TargetSurface } from "./announcements/announcement-repository";
import type { Announcement } from "./announcements/announcement-repository";

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
