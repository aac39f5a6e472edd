import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/errors";
import { filterAnnouncements, normalizeLocale, parseAnnouncementQuery } from "../../src/site/announcements/rules/announcements";
import type { Announcement } from "../../src/site/announcements/announcement-repository";
import type { AnnouncementQuery } from "../../src/site/announcements/rules/announcement-types";
import { compareVersions, isValidVersion } from "../../src/site/releases/rules/versions";
import { junkJson, runs, trickyString } from "./arbitraries";

const NOW = Date.parse("2025-06-15T12:00:00.000Z");
const HOUR = 3_600_000;

const version = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("", "1.0", "1.2.0", "v1.2.3", "2.0.0-beta.1", "1.10", " 1.5 ", "10.0.0") },
  { weight: 1, arbitrary: fc.constantFrom("latest", "1..2", "x") },
);
const instant = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -48, max: 48 }).map((h) => new Date(NOW + h * HOUR).toISOString()) },
  { weight: 2, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: fc.constantFrom("2025-06-15", "2025-06-15T12:00:00Z", " 2025-06-15T13:00:00+01:00 ", "not a date", "2025-13-45", "   ") },
);
const appName = fc.constantFrom("", "myapp", "MyApp", "my-app", "my_app.staging", "myapp-test", "other", "contest", "Test_MyApp", " myapp ");
const level = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("critical", "warning", "info") },
  // Stored rows are checked by the schema, but the order is defined for "anything else" too.
  { weight: 1, arbitrary: fc.constantFrom("notice", "", "toString", "constructor", "__proto__", "valueOf") },
);
const localeText = fc.record(
  { title: fc.option(trickyString, { nil: undefined }), body: fc.option(trickyString, { nil: undefined }), ctaText: fc.option(trickyString, { nil: undefined }) },
  { requiredKeys: [] },
);

const items: fc.Arbitrary<Announcement[]> = fc
  .array(
    fc.record({
      type: fc.constantFrom("modal", "banner"),
      displayType: fc.constantFrom("modal", "toast"),
      targetSurface: fc.constantFrom("client", "home", "all") as fc.Arbitrary<Announcement["targetSurface"]>,
      level: level as fc.Arbitrary<Announcement["level"]>,
      title: trickyString,
      body: trickyString,
      ctaText: trickyString,
      ctaUrl: fc.constantFrom("", "https://example.com"),
      minVersion: version,
      maxVersion: version,
      startAt: instant,
      expiresAt: instant,
      dismissKey: fc.string({ maxLength: 4 }),
      testOnly: fc.boolean(),
      app: appName,
      locales: fc.dictionary(fc.constantFrom("en", "zh-CN", "zh_hant", "ZH", "de-DE", "__proto__", "bad tag!"), localeText, { maxKeys: 3 }),
    }),
    { maxLength: 12 },
  )
  // Ids are unique, as the store's primary key makes them.
  .map((list) => list.map((it, i) => ({ ...it, id: (i * 7919) % 1000 }) as Announcement));

/** Mostly items every query sees, so the order has something to work on. */
const visibleItems = fc
  .tuple(items, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }))
  .map(([list, open]) =>
    list.map((it, i) =>
      open[i] ? { ...it, targetSurface: "all" as const, minVersion: "", maxVersion: "", expiresAt: "", testOnly: false, app: "" } : it,
    ),
  );

const query: fc.Arbitrary<AnnouncementQuery> = fc.record({
  app: appName,
  version: fc.constantFrom("", "1.0", "1.2.0", "1.5", "2.0.0-beta.1", "3"),
  locale: fc.constantFrom("", "en", "zh-cn", "zh-CN", "zh-hant-tw", "zh-Hant-TW", "de"),
  surface: fc.constantFrom("client", "home"),
  includeTest: fc.boolean(),
});
const now = fc.oneof(fc.constant(NOW), fc.integer({ min: NOW - 50 * HOUR, max: NOW + 50 * HOUR }));

// ---- an independent reading of the rules ------------------------------------------------------------------

const tokens = (s: string) => s.trim().toLowerCase().split(/[-._\s]+/).filter(Boolean);
const isTest = (app: string) => tokens(app).some((t) => t === "test" || t === "staging");
function appOk(target: string, app: string): boolean {
  const t = tokens(target).join("-");
  if (t === "") return true;
  const a = tokens(app);
  return a.length > 0 && (t === a.join("-") || t === a.filter((x) => x !== "test" && x !== "staging").join("-"));
}
function versionOk(it: Announcement, v: string): boolean {
  const [min, max] = [it.minVersion.trim(), it.maxVersion.trim()];
  if (min === "" && max === "") return true;
  if (v === "") return false;
  if (min !== "" && (!isValidVersion(min) || compareVersions(v, min) < 0)) return false;
  if (max !== "" && (!isValidVersion(max) || compareVersions(v, max) > 0)) return false;
  return true;
}
function timeOk(it: Announcement, t: number): boolean {
  const start = it.startAt.trim() === "" ? -Infinity : Date.parse(it.startAt);
  const end = it.expiresAt.trim() === "" ? Infinity : Date.parse(it.expiresAt);
  return !Number.isNaN(start) && !Number.isNaN(end) && start <= t && t < end;
}
function visible(it: Announcement, q: AnnouncementQuery, t: number): boolean {
  return (
    (it.targetSurface === "all" || it.targetSurface === q.surface) &&
    (!it.testOnly || q.includeTest || isTest(q.app)) &&
    appOk(it.app, q.app) &&
    versionOk(it, q.version) &&
    timeOk(it, t)
  );
}
const RANK = new Map([
  ["critical", 0],
  ["warning", 1],
  ["info", 2],
]);
function expectedOrder(list: Announcement[]): number[] {
  const start = (it: Announcement) => {
    const t = it.startAt.trim() === "" ? NaN : Date.parse(it.startAt);
    return Number.isNaN(t) ? -Infinity : t;
  };
  return [...list]
    .sort((a, b) => (RANK.get(a.level) ?? 3) - (RANK.get(b.level) ?? 3) || (start(a) === start(b) ? 0 : start(b) > start(a) ? 1 : -1) || a.id - b.id)
    .map((it) => it.id);
}

describe("announcement filter", () => {
  test("any query parameters: a normalised query or a 400 AppError, never another error", () => {
    const param = fc.oneof(
      fc.constantFrom("client", "home", "HOME", "all", "1", "0", "true", "false", "1.2.3", "v2", "zh_CN", "en_US.UTF-8", "de_DE@euro", "x".repeat(200)),
      trickyString,
      fc.array(fc.constantFrom("client", "1"), { minLength: 2, maxLength: 2 }),
      junkJson([], 1),
    );
    const raw = fc.dictionary(fc.constantFrom("surface", "version", "locale", "app", "test", "staging", "other", "__proto__"), param, { maxKeys: 5 });
    fc.assert(
      fc.property(raw, (r) => {
        let q: AnnouncementQuery;
        try {
          q = parseAnnouncementQuery(r);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).status).toBe(400);
          return;
        }
        expect(["client", "home"]).toContain(q.surface);
        expect(q.version === "" || isValidVersion(q.version)).toBe(true);
        expect(q.app.length).toBeLessThanOrEqual(128);
        expect(q.app).toBe(q.app.trim());
        expect(/^([a-z]{1,8}(-[a-z0-9]{1,8})*)?$/i.test(q.locale)).toBe(true);
        // Canonical already: normalising again changes nothing (one spelling per tag, e.g. zh-CN).
        if (q.locale !== "") expect(normalizeLocale(q.locale)).toBe(q.locale);
      }),
      runs(800),
    );
  });

  test("never throws; the result is exactly the items the surface, test, app, version and time rules allow", () => {
    fc.assert(
      fc.property(items, query, now, (list, q, t) => {
        const got = filterAnnouncements(list, q, t).map((v) => v.id);
        const want = list.filter((it) => visible(it, q, t)).map((it) => it.id);
        expect([...got].sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
      }),
      runs(800),
    );
  });

  test("order: level (critical, warning, info, anything else), newest start first, then id; the same for any input order", () => {
    fc.assert(
      fc.property(
        visibleItems.chain((l) => fc.tuple(fc.constant(l), fc.shuffledSubarray(l, { minLength: l.length }))),
        query,
        now,
        ([list, shuffled], q, t) => {
          const got = filterAnnouncements(list, q, t).map((v) => v.id);
          expect(filterAnnouncements(shuffled, q, t).map((v) => v.id)).toEqual(got);
          expect(got).toEqual(expectedOrder(list.filter((it) => visible(it, q, t))));
        },
      ),
      runs(600),
    );
  });

  test("each view is its item, localised: texts from the most specific locale that has them, bounds trimmed", () => {
    fc.assert(
      fc.property(items, query, now, (list, q, t) => {
        for (const v of filterAnnouncements(list, q, t)) {
          const it = list.find((x) => x.id === v.id)!;
          expect(v).toMatchObject({ type: it.type, level: it.level, testOnly: it.testOnly, targetSurface: it.targetSurface });
          expect(v.minVersion).toBe(it.minVersion.trim());
          expect(v.maxVersion).toBe(it.maxVersion.trim());
          // The locale texts by normalised tag (a later key for the same tag replaces an earlier one).
          const byTag = new Map<string, Record<string, unknown>>();
          for (const [key, text] of Object.entries(it.locales)) {
            const tag = key.trim().replace(/[.@].*$/, "").replace(/_/g, "-").toLowerCase();
            if (/^[a-z]{1,8}(-[a-z0-9]{1,8})*$/.test(tag) && text) byTag.set(tag, text as Record<string, unknown>);
          }
          // Tags match whatever their case.
          const parts = q.locale === "" ? [] : q.locale.toLowerCase().split("-");
          const chain = parts.map((_, n) => byTag.get(parts.slice(0, parts.length - n).join("-"))).filter((t) => t !== undefined);
          for (const k of ["title", "body", "ctaText"] as const) {
            const found = chain.map((t) => t[k]).find((x) => typeof x === "string" && x !== "");
            expect(v[k]).toBe((found as string | undefined) ?? it[k]);
          }
          if (v.startAt !== "") expect(Number.isNaN(Date.parse(v.startAt))).toBe(false);
        }
      }),
      runs(400),
    );
  });
});
