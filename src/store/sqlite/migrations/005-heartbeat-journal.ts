/**
 * 5: heartbeats are first appended to a journal (one commit for a batch touches a couple of pages, however
 * scattered the client ids), and folded into `clients` later in large batches. NULL fields are fields the
 * client did not send: folding keeps the stored value for them.
 */
export default `
  CREATE TABLE heartbeat_journal (
    id        INTEGER PRIMARY KEY,
    client_id TEXT NOT NULL,
    first_at  INTEGER NOT NULL,
    at        INTEGER NOT NULL,
    app       TEXT,
    version   TEXT,
    platform  TEXT,
    arch      TEXT,
    runtime   TEXT,
    locale    TEXT,
    count     INTEGER NOT NULL
  );
`;
