/**
 * The PostgreSQL schema, as numbered forward-only migrations (the same tables and meanings as the SQLite
 * schema, in PostgreSQL's types). Times are milliseconds since the epoch (BIGINT), money is integer
 * micro-units, as in SQLite. Changes that running servers must hear of are announced by triggers on the
 * `gantry_changes` channel (payload: the change feed's topic), so the CLI and every instance are heard alike.
 */
export const CHANGE_CHANNEL = "gantry_changes";

const V1 = `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );

  CREATE FUNCTION gantry_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('${CHANGE_CHANNEL}', TG_ARGV[0]);
    RETURN NULL;
  END $$;

  CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    prefix         TEXT NOT NULL,
    hash           TEXT NOT NULL UNIQUE,
    status         TEXT NOT NULL DEFAULT 'active',
    not_before     BIGINT,
    expires_at     BIGINT,
    model_mode     TEXT CHECK (model_mode IN ('allow', 'deny')),
    models         TEXT NOT NULL DEFAULT '[]',
    quota_tokens   BIGINT,
    balance_micros BIGINT,
    rpm            INTEGER,
    rpd            INTEGER,
    concurrency    INTEGER,
    max_tokens     INTEGER,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
  );

  -- Running totals, apart from api_keys so that settling usage is not a key change.
  CREATE TABLE key_usage (
    key_id        TEXT PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
    requests      BIGINT NOT NULL DEFAULT 0,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    spent_micros  BIGINT NOT NULL DEFAULT 0,
    reset_at      BIGINT
  );

  CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION gantry_announce_change('keys');
  CREATE TRIGGER key_usage_reset AFTER UPDATE OF reset_at ON key_usage
    FOR EACH ROW WHEN (OLD.reset_at IS DISTINCT FROM NEW.reset_at) EXECUTE FUNCTION gantry_announce_change('keys');

  CREATE TABLE usage_ledger (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts               BIGINT NOT NULL,
    request_id       TEXT NOT NULL,
    key_id           TEXT,
    model            TEXT NOT NULL DEFAULT '',
    endpoint         TEXT NOT NULL,
    status           INTEGER NOT NULL,
    error_code       TEXT,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    cached_tokens    BIGINT NOT NULL DEFAULT 0,
    cost_micros      BIGINT NOT NULL DEFAULT 0,
    duration_ms      BIGINT NOT NULL DEFAULT 0,
    upstream_ttfb_ms BIGINT
  );
  CREATE INDEX usage_ledger_key_ts ON usage_ledger (key_id, ts);
  CREATE INDEX usage_ledger_ts ON usage_ledger (ts);
`;

/**
 * Not yet released on PostgreSQL: while the PostgreSQL backend is being built (issue 16) the first migration
 * still grows; once a release ships it, changes go into new entries only.
 */
export const MIGRATIONS: readonly string[] = [V1];
export const SCHEMA_VERSION = MIGRATIONS.length;
