/**
 * 6: a counter that moves whenever an announcement changes, by any process using the database, so the server
 * can keep its rendered /api/v1/announcements documents until then (as 004 does for releases).
 */
export default `
  INSERT OR IGNORE INTO meta (key, value) VALUES ('announcements_generation', '0');
  CREATE TRIGGER announcements_gen_ins AFTER INSERT ON announcements BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'announcements_generation';
  END;
  CREATE TRIGGER announcements_gen_upd AFTER UPDATE ON announcements BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'announcements_generation';
  END;
  CREATE TRIGGER announcements_gen_del AFTER DELETE ON announcements BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'announcements_generation';
  END;
`;
