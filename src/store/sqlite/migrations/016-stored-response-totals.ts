/**
 * 16: what each key keeps, counted as it changes (responses and bytes, moved by triggers on every insert and
 * delete, whatever deletes: the route, the purge, eviction), so holding a key to its limits at each put reads one
 * row instead of summing the key's responses; and the key's responses by age with their sizes, for evicting its oldest from the index alone.
 */
export default `
  CREATE TABLE stored_response_totals (
    key_id    TEXT PRIMARY KEY,
    responses INTEGER NOT NULL,
    bytes     INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO stored_response_totals (key_id, responses, bytes)
    SELECT key_id, count(*), sum(bytes) FROM stored_responses GROUP BY key_id;
  CREATE TRIGGER stored_response_totals_insert AFTER INSERT ON stored_responses BEGIN
    INSERT INTO stored_response_totals (key_id, responses, bytes) VALUES (NEW.key_id, 1, NEW.bytes)
      ON CONFLICT (key_id) DO UPDATE SET responses = responses + 1, bytes = bytes + excluded.bytes;
  END;
  CREATE TRIGGER stored_response_totals_delete AFTER DELETE ON stored_responses BEGIN
    UPDATE stored_response_totals SET responses = responses - 1, bytes = bytes - OLD.bytes WHERE key_id = OLD.key_id;
  END;
  CREATE INDEX stored_responses_key_age ON stored_responses (key_id, created_at, id, bytes);
`;
