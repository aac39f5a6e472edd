/** DocumentCache: kept until the source's stamp moves, or (getUntil) until the time the builder named. */
import { expect, test } from "bun:test";
import { DocumentCache, type RenderedDocument } from "../../src/site/http/document-cache";
import { nextVisibilityChange } from "../../src/site/announcements/rules/announcements";
import type { Announcement } from "../../src/site/announcements/announcement-repository";

const body = async (doc: RenderedDocument | Promise<RenderedDocument>) => (await doc).body;

test("built once per key while the stamp stays; rebuilt after it moves; a hit is answered without a promise", async () => {
  let stamp = 1;
  let builds = 0;
  const cache = new DocumentCache(() => stamp);
  const build = () => ({ n: ++builds });
  const a = await cache.get("k", build);
  expect(cache.get("k", build)).toBe(a);
  expect(builds).toBe(1);
  stamp = 2;
  expect(await body(cache.get("k", build))).toBe('{"n":2}');
});

test("getUntil: stale from expiresAt on, and when the clock goes back before the build", async () => {
  let builds = 0;
  const cache = new DocumentCache(() => 0);
  const build = () => ({ value: { n: ++builds }, expiresAt: 2000 });
  expect(await body(cache.getUntil("k", 1000, build))).toBe('{"n":1}');
  expect(await body(cache.getUntil("k", 1999, build))).toBe('{"n":1}');
  expect(await body(cache.getUntil("k", 2000, build))).toBe('{"n":2}'); // rebuilt at the edge (and now valid from 2000)
  expect(await body(cache.getUntil("k", 1500, build))).toBe('{"n":3}'); // clock set back before that build
});

test("concurrent misses share one build; a build that overlapped a change of the source is not kept", async () => {
  let stamp = 1;
  let builds = 0;
  let release: () => void = () => {};
  const cache = new DocumentCache(() => stamp);
  const build = async () => {
    builds++;
    await new Promise<void>((r) => (release = r));
    return { n: builds };
  };
  const first = cache.get("k", build);
  const second = cache.get("k", build);
  expect(second).toBe(first);
  stamp = 2; // the source changes while the build reads it
  release();
  expect(await body(first)).toBe('{"n":1}');
  const third = cache.get("k", build);
  expect(third).toBeInstanceOf(Promise); // not kept: built again
  release();
  expect(await body(third)).toBe('{"n":2}');
  expect(cache.get("k", build)).not.toBeInstanceOf(Promise);
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
