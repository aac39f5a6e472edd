/** 3: announcements, client heartbeats (one row per client) and the per-minute online series. */
export default `
  -- Every field of the spec's announcement item, plus the target app and per-locale texts.
  -- Timestamps are canonical ISO 8601 UTC strings ('' = none) because the public document carries them so.
  CREATE TABLE announcements (
    id             INTEGER PRIMARY KEY,
    type           TEXT NOT NULL DEFAULT 'modal',
    display_type   TEXT NOT NULL DEFAULT 'modal',
    target_surface TEXT NOT NULL DEFAULT 'all' CHECK (target_surface IN ('client', 'home', 'all')),
    level          TEXT NOT NULL DEFAULT 'info' CHECK (level IN ('critical', 'warning', 'info')),
    title          TEXT NOT NULL,
    body           TEXT NOT NULL DEFAULT '',
    cta_text       TEXT NOT NULL DEFAULT '',
    cta_url        TEXT NOT NULL DEFAULT '',
    min_version    TEXT NOT NULL DEFAULT '',
    max_version    TEXT NOT NULL DEFAULT '',
    start_at       TEXT NOT NULL DEFAULT '',
    expires_at     TEXT NOT NULL DEFAULT '',
    dismiss_key    TEXT NOT NULL DEFAULT '',
    test_only      INTEGER NOT NULL DEFAULT 0,
    app            TEXT NOT NULL DEFAULT '',
    -- JSON object: language tag -> { title?, body?, ctaText? }
    locales        TEXT NOT NULL DEFAULT '{}',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
  );

  -- One row per client id (de-duplication is the primary key). No IP address, no user agent.
  CREATE TABLE clients (
    client_id  TEXT PRIMARY KEY,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    app        TEXT NOT NULL DEFAULT '',
    version    TEXT NOT NULL DEFAULT '',
    platform   TEXT NOT NULL DEFAULT '',
    arch       TEXT NOT NULL DEFAULT '',
    runtime    TEXT NOT NULL DEFAULT '',
    locale     TEXT NOT NULL DEFAULT '',
    count      INTEGER NOT NULL DEFAULT 0
  ) WITHOUT ROWID;
  -- "Online" and pruning both select by last_seen.
  CREATE INDEX clients_last_seen ON clients (last_seen);

  -- Online count sampled once a minute (minute = start of the minute, epoch ms); kept 30 days.
  CREATE TABLE online_series (
    minute INTEGER PRIMARY KEY,
    online INTEGER NOT NULL
  ) WITHOUT ROWID;
`;
