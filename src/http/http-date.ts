/**
 * The `Date` header value (IMF-fixdate), computed once per second. Replies that Gantry dates itself (documents,
 * HEAD replies, which Bun sends undated) must agree with each other: squid ignores a revalidated reply dated
 * earlier than the copy it holds (TCP_REFRESH_IGNORED), so a HEAD dated by `new Date()` next to a GET dated by
 * Bun's own once-a-second clock kept serving the old document after a change.
 */
let second = -1;
let value = "";

export function httpDate(now = Date.now()): string {
  const s = Math.floor(now / 1000);
  if (s !== second) {
    second = s;
    value = new Date(s * 1000).toUTCString();
  }
  return value;
}
