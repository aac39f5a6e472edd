/**
 * Data shapes of the update and announcement site. Store rows are mapped into these; the pure builders in
 * this folder turn them into the public documents of spec/site-api.md.
 */

/** The full value set of `platform` (the spec shows these four; we add none). "" = not classified. */
export type Platform = "windows" | "macos" | "linux" | "web";

/** The full value set of `arch`. `universal` = runs on every arch (macOS universal builds, web bundles). */
export type Arch = "x64" | "arm64" | "x86" | "universal";

/**
 * Where the bytes of an asset come from: our mirror, the upstream address proxied by the site, or nowhere.
 * Clients show "cannot be downloaded" for `unavailable` (spec, integrator rule 3).
 */
export type AssetSource = "mirror" | "proxy" | "unavailable";

export interface Asset {
  id: number;
  releaseId: number;
  /** File name as published; classification is derived from it unless the operator overrides it. */
  name: string;
  platform: Platform | "";
  arch: Arch | "";
  /** Extension as conventionally written (`exe`, `AppImage`, `tar.gz`); "" when the name has none. */
  fileType: string;
  /** Lowercase hex without prefix, or "" while unknown (e.g. a proxied asset never downloaded). */
  sha256: string;
  size: number | null;
  upstreamUrl: string | null;
  mirrored: boolean;
  downloads: number;
}

export interface Release {
  id: number;
  /** As published (may carry a leading `v`); documents show it without the `v`. */
  version: string;
  notes: string;
  /** ISO 8601 UTC. */
  publishedAt: string;
  /** Set by the operator only; sync never raises it. "" = no minimum. */
  minAppVersion: string;
  prerelease: boolean;
  assets: Asset[];
}

export type AssetWithRecommendation = Asset & { recommended: boolean };

/** Filters of GET /api/v1/latest after normalisation; absent = no filter. */
export interface LatestQuery {
  platform?: Platform;
  arch?: Arch;
  fileType?: string;
}

export type TargetSurface = "client" | "home" | "all";
export type Surface = "client" | "home";

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
