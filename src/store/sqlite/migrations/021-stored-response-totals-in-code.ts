/**
 * 21: a key's stored totals (responses, bytes) are added by the repository, once per key for each batch of kept
 * responses, instead of by a trigger on every insert: the trigger's upsert was about 5 µs of each kept response's
 * ~14 µs insert (docs/performance.md, "The cost of keeping responses"). The trigger on delete stays: every way a
 * response goes (the route, the purge, eviction, a cascade) still takes it off its key's totals.
 */
export default `
  DROP TRIGGER stored_response_totals_insert;
`;
