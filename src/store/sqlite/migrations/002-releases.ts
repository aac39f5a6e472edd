/** 2: releases, their assets, one-time download tokens and download counts (site release work, issue 5). */
export default `
  CREATE TABLE releases (
    id              INTEGER PRIMARY KEY,
    -- As published (may carry a leading v); version_key is the normalised form, so v1.2.0 and 1.2.0 cannot
    -- both exist.
    version         TEXT NOT NULL,
    version_key     TEXT NOT NULL UNIQUE,
    notes           TEXT NOT NULL DEFAULT '',
    published_at    TEXT NOT NULL,
    -- Set by the operator only; sync never raises it.
    min_app_version TEXT NOT NULL DEFAULT '',
    prerelease      INTEGER NOT NULL DEFAULT 0,
    -- 'manual' (publish / admin API) or 'github' (sync); remote_id is the GitHub release id.
    origin          TEXT NOT NULL DEFAULT 'manual' CHECK (origin IN ('manual', 'github')),
    remote_id       INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
  );

  CREATE TABLE release_assets (
    id              INTEGER PRIMARY KEY,
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
  CREATE INDEX release_assets_sha ON release_assets (sha256);
  CREATE INDEX release_assets_remote ON release_assets (remote_id);

  -- Download links: only a SHA-256 of the token is kept, so reading the database does not yield live links.
  CREATE TABLE download_tokens (
    token_hash   TEXT PRIMARY KEY,
    asset_id     INTEGER NOT NULL REFERENCES release_assets(id) ON DELETE CASCADE,
    -- The asset's digest when the token was issued: new bytes behind the same asset make the link gone.
    sha256       TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    consumed_at  INTEGER,
    -- 1 once a GET served bytes through this token, so one token counts as one download.
    counted      INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX download_tokens_expires ON download_tokens (expires_at);

  -- Downloads per asset and UTC day (the total is their sum).
  CREATE TABLE download_counts (
    asset_id  INTEGER NOT NULL REFERENCES release_assets(id) ON DELETE CASCADE,
    day       TEXT NOT NULL,
    count     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (asset_id, day)
  );
`;
