/**
 * 12: staged rollouts and the kill switch. `rollout_percent` is the share of client ids (0-100) offered the
 * release (100 = everyone, what every release so far is); `rollout_paused` freezes it; a `yanked` release is
 * in no document (its files can still be downloaded by asset id).
 */
export default `
  ALTER TABLE releases ADD COLUMN rollout_percent INTEGER NOT NULL DEFAULT 100;
  ALTER TABLE releases ADD COLUMN rollout_paused INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE releases ADD COLUMN yanked INTEGER NOT NULL DEFAULT 0;
`;
