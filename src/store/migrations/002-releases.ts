/** 2: releases, their assets and download tokens (filled in by the site release work). */
export default `
  CREATE TABLE releases_placeholder (id INTEGER PRIMARY KEY);
`;
