/** Announcements in PostgreSQL (the row mapping, shared with SQLite, is store/rows/announcements.ts). */
import type { SQL } from "bun";
import type { AnnouncementFields, AnnouncementRepository, StoredAnnouncement } from "../../site/announcements/announcement-repository";
import type { Row } from "../rows/codec";
import { announcementColumns, announcementFromRow } from "../rows/announcements";
import { postgresColumns } from "./columns";

const fromRow = (r: Row) => announcementFromRow(r, postgresColumns);
const columns = (f: AnnouncementFields) => announcementColumns(f, postgresColumns);

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
