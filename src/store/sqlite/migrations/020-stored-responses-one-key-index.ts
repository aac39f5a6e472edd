/**
 * 20: one index by key on stored responses instead of two. `stored_responses_key (key_id, bytes)` (migration 8) is
 * covered by `stored_responses_key_age (key_id, created_at, id, bytes)` (migration 16): a key's stats read that one
 * instead. Every index is a page more that each kept response's commit writes to the WAL (about 12 µs a commit of
 * one response, measured; docs/performance.md, "The cost of keeping responses").
 */
export default `
  DROP INDEX stored_responses_key;
`;
