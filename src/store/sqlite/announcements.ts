/** Announcements in SQLite: rows <-> Announcement. No rules here (see announcement-input.ts). */
import type { Database } from "bun:sqlite";
import type {
  AnnouncementFields,
  AnnouncementLevel,
  AnnouncementRepository,
  LocaleText,
  StoredAnnouncement,
  TargetSurface,
} from "../../site/announcements/announcement-repository";

interface Row {
  id: number;
  type: string;
  display_type: string;
  target_surface: string;
  level: string;
  title: string;
  body: string;
  cta_text: string;
  cta_url: string;
  min_version: string;
  max_version: string;
  start_at: string;
  expires_at: string;
  dismiss_key: string;
  test_only: number;
  app: string;
  locales: string;
  created_at: number;
  updated_at: number;
}

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
    id: r.id,
    type: r.type,
    displayType: r.display_type,
    targetSurface: r.target_surface as TargetSurface,
    level: r.level as AnnouncementLevel,
    title: r.title,
    body: r.body,
    ctaText: r.cta_text,
    ctaUrl: r.cta_url,
    minVersion: r.min_version,
    maxVersion: r.max_version,
    startAt: r.start_at,
    expiresAt: r.expires_at,
    dismissKey: r.dismiss_key,
    testOnly: r.test_only === 1,
    app: r.app,
    locales: parseLocales(r.locales),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function params(f: AnnouncementFields) {
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
    test_only: f.testOnly ? 1 : 0,
    app: f.app,
    locales: JSON.stringify(f.locales),
  };
}

const COLUMNS = Object.keys(params({} as AnnouncementFields));

export class SqliteAnnouncementRepository implements AnnouncementRepository {
  constructor(
    private readonly db: Database,
    /** Runs after every committed change (the change feed's "announcements" touch). */
    private readonly changed: () => void = () => {},
  ) {}

  async list(): Promise<StoredAnnouncement[]> {
    return (this.db.query("SELECT * FROM announcements ORDER BY id").all() as Row[]).map(fromRow);
  }

  async get(id: number): Promise<StoredAnnouncement | null> {
    const r = this.db.query("SELECT * FROM announcements WHERE id = ?").get(id) as Row | null;
    return r ? fromRow(r) : null;
  }

  async insert(fields: AnnouncementFields, now: number): Promise<StoredAnnouncement> {
    const cols = [...COLUMNS, "created_at", "updated_at"];
    const r = this.db
      .query(`INSERT INTO announcements (${cols.join(", ")}) VALUES (${cols.map((c) => "$" + c).join(", ")}) RETURNING *`)
      .get({ ...params(fields), created_at: now, updated_at: now }) as Row;
    this.changed();
    return fromRow(r);
  }

  async update(id: number, fields: AnnouncementFields, now: number): Promise<StoredAnnouncement | null> {
    const set = [...COLUMNS, "updated_at"].map((c) => `${c} = $${c}`).join(", ");
    const r = this.db
      .query(`UPDATE announcements SET ${set} WHERE id = $id RETURNING *`)
      .get({ ...params(fields), updated_at: now, id }) as Row | null;
    if (r) this.changed();
    return r ? fromRow(r) : null;
  }

  async delete(id: number): Promise<boolean> {
    const deleted = this.db.query("DELETE FROM announcements WHERE id = ?").run(id).changes === 1;
    if (deleted) this.changed();
    return deleted;
  }
}
