/**
 * 4: a counter that moves whenever a release or an asset changes, by any process using the database, so the
 * server can keep its rendered /api/v1/latest and /update/latest.json documents until then.
 */
export default `
  INSERT OR IGNORE INTO meta (key, value) VALUES ('releases_generation', '0');
  CREATE TRIGGER releases_gen_ins AFTER INSERT ON releases BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER releases_gen_upd AFTER UPDATE ON releases BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER releases_gen_del AFTER DELETE ON releases BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER assets_gen_ins AFTER INSERT ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER assets_gen_upd AFTER UPDATE ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER assets_gen_del AFTER DELETE ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
`;
