/**
 * 17: the digests updater protocols carry (issue 35): SHA-512 in base64 for electron-updater, SHA-1 in hex for
 * Squirrel.Windows' RELEASES, computed with the SHA-256 when bytes are stored. "" = not known yet: assets stored
 * before this migration get them from the backfill a server runs at start (site/releases/asset-digests.ts).
 */
export default `
  ALTER TABLE release_assets ADD COLUMN sha512 TEXT NOT NULL DEFAULT '';
  ALTER TABLE release_assets ADD COLUMN sha1 TEXT NOT NULL DEFAULT '';
`;
