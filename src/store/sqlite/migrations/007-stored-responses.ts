/**
 * 7: responses kept for their callers (`store` not false): one row per response with what it added (its new input
 * items and its output, as JSON), and its items by id for `item_reference`, both per API key.
 */
export default `
  CREATE TABLE stored_responses (
    id          TEXT PRIMARY KEY,
    key_id      TEXT NOT NULL,
    previous_id TEXT,
    model       TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    response    TEXT NOT NULL,
    input_items TEXT NOT NULL,
    bytes       INTEGER NOT NULL
  );
  CREATE INDEX stored_responses_expires ON stored_responses (expires_at);

  CREATE TABLE stored_items (
    key_id      TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    response_id TEXT NOT NULL REFERENCES stored_responses(id) ON DELETE CASCADE,
    item        TEXT NOT NULL,
    PRIMARY KEY (key_id, item_id)
  ) WITHOUT ROWID;
  CREATE INDEX stored_items_response ON stored_items (response_id);
`;
