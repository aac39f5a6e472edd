/** Announcements in PostgreSQL: rows <-> Announcement (the same mapping as store/sqlite/announcements.ts). */
import type { SQL } from "bun";
import type {
  AnnouncementFields,
  AnnouncementLevel,
  AnnouncementRepository,
  LocaleText,
  StoredAnnouncement,
  TargetSurface,
} from "../../site/announcements/announcement-repository";
import { num } from "./db";

type Row = Record<string, unknown>;

function parseLocales(json: string): Record<string, LocaleText> {
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    // A hand-edited row must not take the public endpoint down; it just loses its translations.
    return {};
  }
}

function fromRow(r: Row): StoredAnnouncement {
  return {
    id: num(r.id),
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
    testOnly: r.test_only === true,
    app: r.app as string,
    locales: parseLocales(r.locales as string),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

function columns(f: AnnouncementFields) {
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
    test_only: f.testOnly,
    app: f.app,
    locales: JSON.stringify(f.locales),
  };
}

export class PostgresAnnouncementRepository implements AnnouncementRepository {
  constructor(
    private readonly sql: SQL,
    /** Runs after every committed change (the change feed's "announcements" touch; the trigger tells the others). */
    private readonly changed: () => void = () => {},
  ) {}

  async list(): Promise<StoredAnnouncement[]> {
    return (await this.sql`SELECT * FROM announcements ORDER BY id`).map(fromRow);
  }

  async get(id: number): Promise<StoredAnnouncement | null> {
    const [r] = await this.sql`SELECT * FROM announcements WHERE id = ${id}`;
    return r ? fromRow(r) : null;
  }

  async insert(fields: AnnouncementFields, now: number): Promise<StoredAnnouncement> {
    const [r] = await this.sql`INSERT INTO announcements ${this.sql({ ...columns(fields), created_at: now, updated_at: now })} RETURNING *`;
    this.changed();
    return fromRow(r);
  }

  async update(id: number, fields: AnnouncementFields, now: number): Promise<StoredAnnouncement | null> {
    const [r] = await this.sql`UPDATE announcements SET ${this.sql({ ...columns(fields), updated_at: now })} WHERE id = ${id} RETURNING *`;
    if (r) this.changed();
    return r ? fromRow(r) : null;
  }

  async delete(id: number): Promise<boolean> {
    const rows = await this.sql`DELETE FROM announcements WHERE id = ${id} RETURNING id`;
    if (rows.length) this.changed();
    return rows.length === 1;
  }
}
