/** 1: meta, API keys, their usage counters and the usage ledger. */
export default `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  INSERT INTO meta (key, value) VALUES ('keys_generation', '0');

  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    status       TEXT NOT NULL DEFAULT 'active',
    not_before   INTEGER,
    expires_at   INTEGER,
    model_mode   TEXT CHECK (model_mode IN ('allow', 'deny')),
    models       TEXT NOT NULL DEFAULT '[]',
    quota_tokens INTEGER,
    balance_micros INTEGER,
    rpm          INTEGER,
    rpd          INTEGER,
    concurrency  INTEGER,
    max_tokens   INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
  );

  -- Running totals, kept apart from api_keys so that settling usage does not look like a key change.
  CREATE TABLE key_usage (
    key_id        TEXT PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
    requests      INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    spent_micros  INTEGER NOT NULL DEFAULT 0,
    reset_at      INTEGER
  );

  -- A running server reloads its key cache when this counter moves (the CLI may change keys at any time).
  CREATE TRIGGER api_keys_ins AFTER INSERT ON api_keys BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'keys_generation';
  END;
  CREATE TRIGGER api_keys_upd AFTER UPDATE ON api_keys BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'keys_generation';
  END;
  CREATE TRIGGER api_keys_del AFTER DELETE ON api_keys BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'keys_generation';
  END;
  CREATE TRIGGER key_usage_reset AFTER UPDATE OF reset_at ON key_usage BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'keys_generation';
  END;

  CREATE TABLE usage_ledger (
    id               INTEGER PRIMARY KEY,
    ts               INTEGER NOT NULL,
    request_id       TEXT NOT NULL,
    key_id           TEXT,
    model            TEXT NOT NULL DEFAULT '',
    endpoint         TEXT NOT NULL,
    status           INTEGER NOT NULL,
    error_code       TEXT,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_micros      INTEGER NOT NULL DEFAULT 0,
    duration_ms      INTEGER NOT NULL DEFAULT 0,
    upstream_ttfb_ms INTEGER
  );
  CREATE INDEX usage_ledger_key_ts ON usage_ledger (key_id, ts);
  CREATE INDEX usage_ledger_ts ON usage_ledger (ts);
  `;
