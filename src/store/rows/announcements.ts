/** The announcements row ↔ StoredAnnouncement, for every backend (each keeps its own SQL). No rules here (see announcement-input.ts). */
import type { AnnouncementFields, AnnouncementLevel, LocaleText, StoredAnnouncement, TargetSurface } from "../../site/announcements/announcement-repository";
import type { ColumnCodec, Row } from "./codec";

function parseLocales(json: string): Record<string, LocaleText> {
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    // A hand-edited row must not take the public endpoint down; it just loses its translations.
    return {};
  }
}

export function announcementFromRow(r: Row, c: ColumnCodec): StoredAnnouncement {
  return {
    id: c.num(r.id),
    type: r.type as string,
    displayType: r.display_type as string,
    targetSurface: r.target_surface as TargetSurface,
    level: r.level as AnnouncementLevel,
    title: r.title as string,
    body: r.body as string,
    ctaText: r.cta_text as string,
    ctaUrl: r.cta_url as string,
    minVersion: r.min_version as string,
    maxVersion: r.max_version as string,
    startAt: r.start_at as string,
    expiresAt: r.expires_at as string,
    dismissKey: r.dismiss_key as string,
    testOnly: c.bool(r.test_only),
    app: r.app as string,
    locales: parseLocales(r.locales as string),
    createdAt: c.num(r.created_at),
    updatedAt: c.num(r.updated_at),
  };
}

/** The columns an insert or update writes, by name, with their values. */
export function announcementColumns(f: AnnouncementFields, c: ColumnCodec) {
  return {
    type: f.type,
    display_type: f.displayType,
    target_surface: f.targetSurface,
    level: f.level,
    title: f.title,
    body: f.body,
    cta_text: f.ctaText,
    cta_url: f.ctaUrl,
    min_version: f.minVersion,
    max_version: f.maxVersion,
    start_at: f.startAt,
    expires_at: f.expiresAt,
    dismiss_key: f.dismissKey,
    test_only: c.flag(f.testOnly),
    app: f.app,
    locales: JSON.stringify(f.locales),
  };
}
