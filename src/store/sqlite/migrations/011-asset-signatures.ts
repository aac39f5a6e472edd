/**
 * 11: an asset carries its minisign signature file (`NAME.minisig` / `NAME.sig`) as text, null when it has none;
 * the latest documents give it base64-encoded (issue 19, signed updates).
 */
export default `
  ALTER TABLE release_assets ADD COLUMN signature TEXT;
`;
