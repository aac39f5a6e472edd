/** DocumentCache: kept until the source's stamp moves, or (getUntil) until the time the builder named. */
import { expect, test } from "bun:test";
import { DocumentCache } from "../../src/site/document-cache";
import { nextVisibilityChange } from "../../src/site/announcements/announcements";
import type { Announcement } from "../../src/site/types";

test("built once per key while the stamp stays; rebuilt after it moves", () => {
  let stamp = 1;
  let builds = 0;
  const cache = new DocumentCache(() => stamp);
  const build = () => ({ n: ++builds });
  const a = cache.get("k", build);
  expect(cache.get("k", build)).toBe(a);
  expect(builds).toBe(1);
  stamp = 2;
  expect(cache.get("k", build).body).toBe('{"n":2}');
});

test("getUntil: stale from expiresAt on, and when the clock goes back before the build", () => {
  let builds = 0;
  const cache = new DocumentCache(() => 0);
  const build = () => ({ value: { n: ++builds }, expiresAt: 2000 });
  expect(cache.getUntil("k", 1000, build).body).toBe('{"n":1}');
  expect(cache.getUntil("k", 1999, build).body).toBe('{"n":1}');
  expect(cache.getUntil("k", 2000, build).body).toBe('{"n":2}'); // rebuilt at the edge (and now valid from 2000)
  expect(cache.getUntil("k", 1500, build).body).toBe('{"n":3}'); // clock set back before that build
});

test("nextVisibilityChange: the nearest start or expiry after now, ignoring past and unparsable edges", () => {
  const item = (startAt: string, expiresAt: string) => ({ startAt, expiresAt }) as Announcement;
  const now = Date.parse("2030-01-01T00:00:00Z");
  expect(nextVisibilityChange([], now)).toBe(Number.POSITIVE_INFINITY);
  expect(
    nextVisibilityChange(
      [
        item("2020-01-01T00:00:00Z", ""),
        item("2030-06-01T00:00:00Z", "2031-01-01T00:00:00Z"),
        item("", "2030-03-01T00:00:00Z"),
        item("not a date", "2030-01-01T00:00:00Z"), // exactly now: already happened
      ],
      now,
    ),
  ).toBe(Date.parse("2030-03-01T00:00:00Z"));
});
