/**
 * 13: where sync fetches an asset's signature from (issue 19, signed updates): the addresses of the release asset
 * `NAME.minisig` / `NAME.sig` beside it on GitHub (browser download and API), null when the remote has none.
 */
export default `
  ALTER TABLE release_assets ADD COLUMN signature_url TEXT;
  ALTER TABLE release_assets ADD COLUMN signature_api_url TEXT;
`;
