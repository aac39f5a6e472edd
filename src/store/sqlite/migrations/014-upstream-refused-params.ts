/**
 * 14: request parameters an upstream refused as unsupported, per upstream (its base URL) and model, so that
 * a restart does not relearn them through failed calls (issue 30).
 */
export default `
  CREATE TABLE upstream_refused_params (
    upstream  TEXT NOT NULL,
    model     TEXT NOT NULL,
    param     TEXT NOT NULL,
    learnt_at INTEGER NOT NULL,
    PRIMARY KEY (upstream, model, param)
  );
`;
