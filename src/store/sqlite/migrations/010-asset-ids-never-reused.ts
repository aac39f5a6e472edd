/**
 * 10: asset ids are never handed out twice. A download link (`/api/v1/download/{id}`) names an asset by id;
 * `INTEGER PRIMARY KEY` gives a new row the largest id + 1, so deleting the newest asset handed its id (and every
 * old link to it) to the next file published. AUTOINCREMENT keeps the high-water mark in sqlite_sequence.
 *
 * SQLite cannot add AUTOINCREMENT to a table: it is rebuilt (create, copy, drop, rename, indexes, triggers).
 * Migrations run in a transaction with foreign keys on, where `PRAGMA foreign_keys` cannot be switched off, and
 * dropping release_assets would then cascade-delete every download token and count. So the two child tables
 * are set aside first and rebuilt as they were, rows and all. An id deleted before this migration is past
 * recovery (nothing remembers it); from here on none is reused.
 */
export default `
  CREATE TEMP TABLE m010_tokens AS SELECT * FROM download_tokens;
  CREATE TEMP TABLE m010_counts AS SELECT * FROM download_counts;
  DROP TABLE download_tokens;
  DROP TABLE download_counts;

  CREATE TABLE release_assets_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    release_id      INTEGER NOT NULL REFERENCES releases(id) ON DELETE CASCADE,
    -- Sanitised file name (no path separators, no control characters); never used to build a path.
    name            TEXT NOT NULL,
    platform        TEXT NOT NULL DEFAULT '',
    arch            TEXT NOT NULL DEFAULT '',
    file_type       TEXT NOT NULL DEFAULT '',
    -- 1 when the operator set platform/arch/file_type: sync and re-publish then leave them alone.
    classified_by_operator INTEGER NOT NULL DEFAULT 0,
    -- Lowercase hex of the mirrored bytes ('' while unknown). The mirror stores bytes under this digest.
    sha256          TEXT NOT NULL DEFAULT '',
    size            INTEGER,
    mirrored        INTEGER NOT NULL DEFAULT 0,
    -- Where the bytes can be fetched from when they are not mirrored (http/https only), or NULL.
    upstream_url    TEXT,
    -- Sync bookkeeping: the GitHub asset id and API URL, its updated_at and digest, the last mirror error.
    remote_id       INTEGER,
    remote_api_url  TEXT,
    remote_updated_at TEXT,
    remote_digest   TEXT,
    remote_size     INTEGER,
    mirror_error    TEXT,
    -- 1 while sync still has to (re)download the bytes: new remote assets, and ones changed upstream (the
    -- old bytes keep being served until the new ones are in).
    mirror_pending  INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (release_id, name)
  );
  INSERT INTO release_assets_new SELECT * FROM release_assets;
  DROP TABLE release_assets;
  ALTER TABLE release_assets_new RENAME TO release_assets;
  CREATE INDEX release_assets_sha ON release_assets (sha256);
  CREATE INDEX release_assets_remote ON release_assets (remote_id);
  -- Dropped with the old table (migration 4): the latest documents are kept until this counter moves.
  CREATE TRIGGER assets_gen_ins AFTER INSERT ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER assets_gen_upd AFTER UPDATE ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  CREATE TRIGGER assets_gen_del AFTER DELETE ON release_assets BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';
  END;
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'releases_generation';

  -- As migration 2 made them.
  CREATE TABLE download_tokens (
    token_hash   TEXT PRIMARY KEY,
    asset_id     INTEGER NOT NULL REFERENCES release_assets(id) ON DELETE CASCADE,
    sha256       TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    consumed_at  INTEGER,
    counted      INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX download_tokens_expires ON download_tokens (expires_at);
  CREATE TABLE download_counts (
    asset_id  INTEGER NOT NULL REFERENCES release_assets(id) ON DELETE CASCADE,
    day       TEXT NOT NULL,
    count     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (asset_id, day)
  );
  INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at, consumed_at, counted)
    SELECT token_hash, asset_id, sha256, created_at, expires_at, consumed_at, counted FROM m010_tokens;
  INSERT INTO download_counts (asset_id, day, count) SELECT asset_id, day, count FROM m010_counts;
  DROP TABLE m010_tokens;
  DROP TABLE m010_counts;
`;
