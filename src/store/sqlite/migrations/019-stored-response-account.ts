/**
 * 19: the upstream account that produced each kept response (issue 33): a continuation goes back to it while it is
 * usable (its encrypted reasoning and prompt cache live there). Null for responses kept before, or by a pool that
 * named no account.
 */
export default `
  ALTER TABLE stored_responses ADD COLUMN account TEXT;
`;
