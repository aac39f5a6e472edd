/**
 * 18: the upstream account that served each call (issue 33: a pool of accounts). NULL for rows written before,
 * and for calls that never reached an upstream (refusals, model lists served from the cache).
 */
export default `
  ALTER TABLE usage_ledger ADD COLUMN account TEXT;
`;
