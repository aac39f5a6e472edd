import { describe, expect, test } from "bun:test";
import {
  appMatches,
  buildAnnouncementDocument,
  compareAnnouncements,
  filterAnnouncements,
  isAnnouncementVisible,
  isTestApp,
  normalizeLocale,
  parseAnnouncementQuery,
  pickLocaleText,
} from "../../src/site/announcements/rules/announcements";
import type { Announcement } from "../../src/site/announcements/announcement-repository";
import type { AnnouncementQuery } from "../../src/site/announcements/rules/announcement-types";
import { AppError } from "../../src/errors";

const NOW = Date.parse("2025-06-15T12:00:00.000Z");

function item(over: Partial<Announcement> = {}): Announcement {
  return {
    id: 1,
    type: "modal",
    displayType: "modal",
    targetSurface: "client",
    level: "info",
    title: "Title",
    body: "Body",
    ctaText: "Open",
    ctaUrl: "https://example.com",
    minVersion: "",
    maxVersion: "",
    startAt: "2025-06-01T00:00:00.000Z",
    expiresAt: "",
    dismissKey: "k1",
    testOnly: false,
    app: "",
    locales: {},
    ...over,
  };
}
function q(over: Partial<AnnouncementQuery> = {}): AnnouncementQuery {
  return { app: "", version: "", locale: "", surface: "client", includeTest: false, ...over };
}

function expect400(raw: Record<string, unknown>, param: string) {
  let err: unknown;
  try {
    parseAnnouncementQuery(raw);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).status).toBe(400);
  expect((err as AppError).code).toBe("invalid_request");
  expect((err as AppError).param).toBe(param);
}

describe("parseAnnouncementQuery", () => {
  test("full query", () => {
    expect(parseAnnouncementQuery({ app: " myapp ", version: "v1.2.3", locale: "zh_CN", surface: "HOME", test: "1" })).toEqual({
      app: "myapp",
      version: "1.2.3",
      locale: "zh-CN",
      surface: "home",
      includeTest: true,
    });
  });
  test("defaults: surface client, no test, nothing else", () => {
    expect(parseAnnouncementQuery({})).toEqual(q());
    expect(parseAnnouncementQuery({ surface: "", version: "", locale: "", test: "", staging: "" })).toEqual(q());
  });
  test("flags", () => {
    expect(parseAnnouncementQuery({ staging: "1" }).includeTest).toBe(true);
    expect(parseAnnouncementQuery({ test: "true" }).includeTest).toBe(true);
    expect(parseAnnouncementQuery({ test: "0", staging: "false" }).includeTest).toBe(false);
  });
  test("POSIX locale forms are accepted", () => {
    expect(parseAnnouncementQuery({ locale: "en_US.UTF-8" }).locale).toBe("en-US");
    expect(parseAnnouncementQuery({ locale: "de_DE@euro" }).locale).toBe("de-DE");
  });
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ surface: "all" }, "surface"],
    [{ surface: "desktop" }, "surface"],
    [{ version: "latest" }, "version"],
    [{ version: "1.2.x" }, "version"],
    [{ locale: "en US" }, "locale"],
    [{ locale: "en-US,en;q=0.9" }, "locale"],
    [{ locale: "*" }, "locale"],
    [{ test: "yes" }, "test"],
    [{ test: "2" }, "test"],
    [{ staging: "on" }, "staging"],
    [{ app: "a".repeat(129) }, "app"],
    [{ surface: ["client", "home"] }, "surface"],
  ];
  for (const [raw, param] of bad) test(`400 ${JSON.stringify(raw).slice(0, 60)}`, () => expect400(raw, param));
});

describe("isTestApp", () => {
  const yes = ["myapp-staging", "myapp.test", "test-myapp", "MyApp_Test", "my app staging", "STAGING", "test"];
  const no = ["contest", "testing-app", "myapp", "latest", "myapp-stage", "", "attest.app", "tests"];
  for (const n of yes) test(`test app: ${n}`, () => expect(isTestApp(n)).toBe(true));
  for (const n of no) test(`not a test app: ${JSON.stringify(n)}`, () => expect(isTestApp(n)).toBe(false));
});

describe("appMatches", () => {
  const table: Array<[string, string, boolean]> = [
    ["", "", true],
    ["", "anything", true],
    ["myapp", "", false],
    ["myapp", "myapp", true],
    ["myapp", "MyApp", true],
    ["my-app", "my_app", true],
    ["myapp", "otherapp", false],
    ["myapp", "myapp-staging", true], // a staging build sees its app's items
    ["myapp", "test.myapp", true],
    ["myapp-staging", "myapp-staging", true],
    ["myapp-staging", "myapp", false],
    ["myapp", "myapp-pro", false],
  ];
  for (const [target, app, want] of table) test(`${JSON.stringify(target)} vs ${JSON.stringify(app)}`, () => expect(appMatches(target, app)).toBe(want));
});

describe("pickLocaleText", () => {
  const it = item({
    locales: {
      zh_CN: { title: "标题-CN", body: "正文-CN" },
      zh: { title: "标题", body: "正文", ctaText: "打开" },
      "zh-Hant": { title: "標題" },
      FR: { title: "", body: "Corps" },
    },
  });
  const table: Array<[string, { title: string; body: string; ctaText: string }]> = [
    ["zh-CN", { title: "标题-CN", body: "正文-CN", ctaText: "打开" }], // ctaText falls back to zh
    ["ZH-cn", { title: "标题-CN", body: "正文-CN", ctaText: "打开" }],
    ["zh_CN", { title: "标题-CN", body: "正文-CN", ctaText: "打开" }],
    ["zh-TW", { title: "标题", body: "正文", ctaText: "打开" }], // language fallback
    ["zh-Hant-TW", { title: "標題", body: "正文", ctaText: "打开" }], // prefix chain
    ["zh", { title: "标题", body: "正文", ctaText: "打开" }],
    ["fr-FR", { title: "Title", body: "Corps", ctaText: "Open" }], // empty title falls back to default
    ["en", { title: "Title", body: "Body", ctaText: "Open" }],
    ["", { title: "Title", body: "Body", ctaText: "Open" }],
  ];
  for (const [locale, want] of table) test(`locale ${JSON.stringify(locale)}`, () => expect(pickLocaleText(it, locale)).toEqual(want));

  test("texts stored lowercased by earlier versions still match canonical tags", () => {
    const old = item({ locales: { "zh-cn": { title: "旧-CN" }, "zh-hant": { title: "舊" } } });
    expect(pickLocaleText(old, "zh-CN").title).toBe("旧-CN");
    expect(pickLocaleText(old, "zh-Hant-TW").title).toBe("舊");
  });
  test("a regional text is not used for the bare language", () => {
    expect(pickLocaleText(item({ locales: { "pt-BR": { title: "Olá" } } }), "pt").title).toBe("Title");
  });
});

describe("isAnnouncementVisible: one rule at a time", () => {
  const cases: Array<[string, Partial<Announcement>, Partial<AnnouncementQuery>, boolean]> = [
    // surface
    ["client item on client", { targetSurface: "client" }, { surface: "client" }, true],
    ["client item on home", { targetSurface: "client" }, { surface: "home" }, false],
    ["home item on home", { targetSurface: "home" }, { surface: "home" }, true],
    ["home item on client", { targetSurface: "home" }, { surface: "client" }, false],
    ["all item on client", { targetSurface: "all" }, { surface: "client" }, true],
    ["all item on home", { targetSurface: "all" }, { surface: "home" }, true],
    // test-only
    ["test item, plain request", { testOnly: true }, {}, false],
    ["test item, test flag", { testOnly: true }, { includeTest: true }, true],
    ["test item, staging app name", { testOnly: true }, { app: "myapp-staging" }, true],
    ["test item, test app name", { testOnly: true }, { app: "myapp.test" }, true],
    ["test item, 'contest' is no test app", { testOnly: true }, { app: "contest" }, false],
    ["normal item for a test app", { testOnly: false }, { app: "myapp-test" }, true],
    // target app
    ["targeted, matching app", { app: "myapp" }, { app: "myapp" }, true],
    ["targeted, other app", { app: "myapp" }, { app: "other" }, false],
    ["targeted, no app in request", { app: "myapp" }, {}, false],
    // version range
    ["no bounds, no version", {}, {}, true],
    ["no bounds, any version", {}, { version: "0.0.1" }, true],
    ["min bound, no version", { minVersion: "1.0.0" }, {}, false],
    ["max bound, no version", { maxVersion: "2.0.0" }, {}, false],
    ["min == version", { minVersion: "1.2.0" }, { version: "1.2" }, true],
    ["version just below min", { minVersion: "1.2.0" }, { version: "1.1.99" }, false],
    ["1.10 above min 1.9", { minVersion: "1.9.0" }, { version: "1.10.0" }, true],
    ["max == version", { maxVersion: "v2.0" }, { version: "2.0.0" }, true],
    ["version just above max", { maxVersion: "2.0.0" }, { version: "2.0.0.1" }, false],
    ["prerelease below its release min", { minVersion: "2.0.0" }, { version: "2.0.0-beta.1" }, false],
    ["inside both bounds", { minVersion: "1.0", maxVersion: "1.5" }, { version: "1.4.9" }, true],
    ["unparsable stored bound hides the item", { minVersion: "one" }, { version: "1.0.0" }, false],
    // time window
    ["startAt == now is shown", { startAt: "2025-06-15T12:00:00.000Z" }, {}, true],
    ["startAt 1 ms in the future", { startAt: "2025-06-15T12:00:00.001Z" }, {}, false],
    ["expiresAt == now is hidden", { expiresAt: "2025-06-15T12:00:00.000Z" }, {}, false],
    ["expiresAt 1 ms later is shown", { expiresAt: "2025-06-15T12:00:00.001Z" }, {}, true],
    ["empty startAt and expiresAt", { startAt: "", expiresAt: "" }, {}, true],
    ["offset timestamps are compared as instants", { startAt: "2025-06-15T13:59:59+02:00" }, {}, true],
    ["unparsable expiresAt hides the item", { expiresAt: "soon" }, {}, false],
  ];
  for (const [title, itemOver, queryOver, want] of cases) {
    test(title, () => expect(isAnnouncementVisible(item(itemOver), q(queryOver), NOW)).toBe(want));
  }
});

describe("isAnnouncementVisible: combinations", () => {
  const target = item({
    targetSurface: "home",
    testOnly: true,
    app: "myapp",
    minVersion: "1.2.0",
    maxVersion: "1.9.0",
    startAt: "2025-06-10T00:00:00Z",
    expiresAt: "2025-06-20T00:00:00Z",
  });
  const ok: Partial<AnnouncementQuery> = { surface: "home", app: "myapp-staging", version: "1.5.0" };
  test("all rules satisfied", () => expect(isAnnouncementVisible(target, q(ok), NOW)).toBe(true));
  const breaks: Array<[string, Partial<AnnouncementQuery>, number]> = [
    ["wrong surface", { surface: "client" }, NOW],
    ["production app name without flag", { app: "myapp" }, NOW],
    ["other app with the test flag", { app: "other", includeTest: true }, NOW],
    ["version above range", { version: "1.10.0" }, NOW],
    ["no version", { version: "" }, NOW],
    ["before start", {}, Date.parse("2025-06-09T23:59:59.999Z")],
    ["at expiry", {}, Date.parse("2025-06-20T00:00:00Z")],
  ];
  for (const [title, over, now] of breaks) {
    test(`one rule broken: ${title}`, () => expect(isAnnouncementVisible(target, q({ ...ok, ...over }), now)).toBe(false));
  }
  test("production app name with the test flag", () => {
    expect(isAnnouncementVisible(target, q({ ...ok, app: "myapp", includeTest: true }), NOW)).toBe(true);
  });
});

describe("order", () => {
  test("level, then newest start, then id", () => {
    const items = [
      item({ id: 1, level: "info", startAt: "2025-06-10T00:00:00Z" }),
      item({ id: 2, level: "critical", startAt: "2025-06-01T00:00:00Z" }),
      item({ id: 3, level: "warning", startAt: "2025-06-01T00:00:00Z" }),
      item({ id: 4, level: "info", startAt: "2025-06-12T00:00:00Z" }),
      item({ id: 5, level: "critical", startAt: "2025-06-05T00:00:00Z" }),
      item({ id: 6, level: "info", startAt: "2025-06-12T00:00:00.000Z" }),
      item({ id: 7, level: "info", startAt: "" }),
      item({ id: 8, level: "bogus" as never, startAt: "2025-06-14T00:00:00Z" }),
    ];
    const ids = filterAnnouncements(items.reverse(), q(), NOW).map((a) => a.id);
    expect(ids).toEqual([5, 2, 3, 4, 6, 1, 7, 8]);
  });
  test("a level named like an Object.prototype member ranks as any other unknown level (property-test regression)", () => {
    // Found by tests/property/announcements: LEVEL_RANK["toString"] is a function, so the comparator returned NaN,
    // which sort() reads as "equal": the order then depended on the order the rows came in.
    for (const level of ["toString", "constructor", "__proto__", "valueOf"]) {
      const odd = item({ id: 1, level: level as never, startAt: "" });
      const critical = item({ id: 2, level: "critical", startAt: "" });
      const info = item({ id: 3, level: "info", startAt: "" });
      expect(compareAnnouncements(odd, critical)).toBeGreaterThan(0);
      expect(compareAnnouncements(critical, odd)).toBeLessThan(0);
      expect(filterAnnouncements([odd, critical, info], q(), NOW).map((a) => a.id)).toEqual([2, 3, 1]);
      expect(filterAnnouncements([info, odd, critical], q(), NOW).map((a) => a.id)).toEqual([2, 3, 1]);
    }
  });

  test("comparator is antisymmetric on ties broken by id", () => {
    const a = item({ id: 1 });
    const b = item({ id: 2 });
    expect(compareAnnouncements(a, b)).toBeLessThan(0);
    expect(compareAnnouncements(b, a)).toBeGreaterThan(0);
  });
});

describe("buildAnnouncementDocument", () => {
  test("every spec field on each item, localised, nothing internal", () => {
    const items = [
      item({
        id: 7,
        level: "warning",
        maxVersion: "",
        startAt: "2025-06-01T08:00:00+08:00",
        expiresAt: "",
        app: "myapp",
        locales: { "zh-CN": { title: "维护" } },
        dismissKey: "maint-2",
      }),
      item({ id: 8, targetSurface: "home" }),
    ];
    const doc = buildAnnouncementDocument(items, q({ app: "myapp", locale: "zh-cn" }), NOW);
    expect(doc).toEqual({
      schema: "app.announcements.v1",
      surface: "client",
      announcements: [
        {
          id: 7,
          type: "modal",
          displayType: "modal",
          targetSurface: "client",
          level: "warning",
          title: "维护",
          body: "Body",
          ctaText: "Open",
          ctaUrl: "https://example.com",
          minVersion: "",
          maxVersion: "",
          startAt: "2025-06-01T00:00:00.000Z",
          expiresAt: "",
          dismissKey: "maint-2",
          testOnly: false,
        },
      ],
    });
  });
  test("surface of the document is the requested one, even when empty", () => {
    expect(buildAnnouncementDocument([], q({ surface: "home" }), NOW)).toEqual({
      schema: "app.announcements.v1",
      surface: "home",
      announcements: [],
    });
  });
});

describe("normalizeLocale", () => {
  test("forms", () => {
    expect(normalizeLocale("zh_Hant_TW")).toBe("zh-Hant-TW");
    expect(normalizeLocale("zh-cn")).toBe("zh-CN");
    expect(normalizeLocale("ZH-CN")).toBe("zh-CN");
    expect(normalizeLocale("sr-latn-rs")).toBe("sr-Latn-RS");
    expect(normalizeLocale("es-419")).toBe("es-419");
    // Intl's canonical form replaces deprecated tags.
    expect(normalizeLocale("iw")).toBe("he");
    expect(normalizeLocale("C")).toBe("c");
    expect(normalizeLocale("en-")).toBeNull();
    expect(normalizeLocale("")).toBeNull();
  });
  test("tags Intl refuses but the pattern accepts keep the usual case conventions", () => {
    expect(normalizeLocale("en-a")).toBe("en-a");
    expect(normalizeLocale("zh-cmn-hans")).toBe("zh-cmn-Hans");
    expect(normalizeLocale("x-private-ab")).toBe("x-private-ab");
  });
  test("canonical tags stay as they are", () => {
    for (const tag of ["zh-CN", "zh-Hant-TW", "en-US", "de", "pt-BR", "c", "en-a"]) expect(normalizeLocale(tag)).toBe(tag);
  });
});
