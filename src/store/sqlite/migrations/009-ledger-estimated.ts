/**
 * 9: a ledger row says whether its tokens are the upstream's figures or Gantry's estimate (a request cut by its
 * caller before the upstream reported usage, or usage figures refused as impossible).
 */
export default `
  ALTER TABLE usage_ledger ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
`;
