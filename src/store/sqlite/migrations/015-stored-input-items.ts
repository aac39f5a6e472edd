/**
 * 15: a stored response's input items one row each, in order, so `GET /v1/responses/{id}/input_items` reads one
 * page by position instead of the whole list (a response may carry thousands). Existing lists move into the table;
 * `stored_responses.input_items` keeps `[]` from now on (the column stays: migrations are forward-only).
 */
export default `
  CREATE TABLE stored_input_items (
    response_id TEXT NOT NULL REFERENCES stored_responses(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    item_id     TEXT NOT NULL,
    item        TEXT NOT NULL,
    PRIMARY KEY (response_id, position)
  ) WITHOUT ROWID;
  CREATE INDEX stored_input_items_id ON stored_input_items (response_id, item_id);
  INSERT INTO stored_input_items (response_id, position, item_id, item)
    SELECT r.id, CAST(j.key AS INTEGER), CAST(COALESCE(json_extract(j.value, '$.id'), '') AS TEXT), j.value
    FROM stored_responses r, json_each(r.input_items) j;
  UPDATE stored_responses SET input_items = '[]' WHERE input_items <> '[]';
`;
