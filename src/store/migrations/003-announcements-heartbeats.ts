/** 3: announcements, client heartbeats and the online series (filled in by the site engagement work). */
export default `
  CREATE TABLE announcements_placeholder (id INTEGER PRIMARY KEY);
`;
