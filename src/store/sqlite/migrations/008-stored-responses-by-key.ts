/**
 * 8: what a key keeps, read from an index: `stats(keyId)` sums `bytes` over the key's rows. Without it that sum
 * reads every stored response, large JSON included; with `bytes` in the index it reads the key's index entries
 * only (and the total of `stats()` reads the index, not the table).
 */
export default `
  CREATE INDEX stored_responses_key ON stored_responses (key_id, bytes);
`;
