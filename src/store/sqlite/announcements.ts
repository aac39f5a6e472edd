/** Announcements in SQLite (the row mapping is store/rows/announcements.ts). No rules here (see announcement-input.ts). */
import type { Database } from "bun:sqlite";
import type { AnnouncementFields, AnnouncementRepository, StoredAnnouncement } from "../../site/announcements/announcement-repository";
import type { Row } from "../rows/codec";
import { announcementColumns, announcementFromRow } from "../rows/announcements";
import { sqliteColumns } from "./columns";

const fromRow = (r: Row) => announcementFromRow(r, sqliteColumns);
const params = (f: AnnouncementFields) => announcementColumns(f, sqliteColumns);

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
