/**
 * 15: a stored response's items one row each, by position, so that `GET /v1/responses/{id}/input_items` reads one
 * page instead of the whole list (a response may carry thousands), and the same row serves `item_reference` by id:
 * each item is written once. Rows 0 to input_count-1 are the input items, every one, in order; the output items
 * with an id follow at input_count + their index in the output. item_id is NULL for an item without a string id.
 * An id may appear in several rows (a caller sending an earlier item back); a reference takes the copy of the
 * earliest live response, found in the order of the index by id.
 *
 * Existing responses are rebuilt from their JSON (the input list, the response's output), which also held every
 * item the old by-id table did; `stored_responses.input_items` keeps `[]` from now on (the column stays). Each
 * item's text is taken with `->`, which gives an element's JSON whatever its type.
 */
export default `
  ALTER TABLE stored_responses ADD COLUMN input_count INTEGER NOT NULL DEFAULT 0;
  DROP TABLE stored_items;
  CREATE TABLE stored_items (
    response_id TEXT NOT NULL REFERENCES stored_responses(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    item_id     TEXT,
    item        TEXT NOT NULL,
    PRIMARY KEY (response_id, position)
  ) WITHOUT ROWID;
  INSERT INTO stored_items (response_id, position, item_id, item)
    SELECT r.id, CAST(j.key AS INTEGER),
           CASE WHEN json_type(r.input_items, j.fullkey || '.id') = 'text' THEN json_extract(r.input_items, j.fullkey || '.id') END,
           r.input_items -> j.fullkey
    FROM stored_responses r, json_each(r.input_items) j;
  UPDATE stored_responses SET input_count = json_array_length(input_items);
  INSERT INTO stored_items (response_id, position, item_id, item)
    SELECT r.id, r.input_count + CAST(o.key AS INTEGER), json_extract(r.response, o.fullkey || '.id'), r.response -> o.fullkey
    FROM stored_responses r, json_each(r.response, '$.output') o
    WHERE json_type(r.response, '$.output') = 'array' AND json_type(r.response, o.fullkey || '.id') = 'text';
  UPDATE stored_responses SET input_items = '[]' WHERE input_items <> '[]';
  CREATE INDEX stored_items_id ON stored_items (item_id, response_id);
`;
