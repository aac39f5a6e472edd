import type { AnnouncementFields } from "../../src/site/announcements/announcement-repository";
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import {
  AnnouncementInput,
  ReshowInput,
  announcementStatus,
  canonicalTime,
  checkInput,
  reshowKey,
  resolveAnnouncement,

} from "../../src/site/announcements/rules/announcement-input";
import { announcementInputFromFlags, applyLocaleTexts } from "../../src/cli/announcements";
import { UsageError } from "../../src/cli/common";
import { thrownAppError } from "../support/app-error";

const NOW = Date.parse("2025-06-15T12:00:00.000Z");
let keyN = 0;
const ctx = { now: NOW, newDismissKey: () => `gen-${++keyN}` };


describe("resolveAnnouncement: create", () => {
  test("defaults", () => {
    keyN = 0;
    expect(resolveAnnouncement({ title: " Hi ", body: "Text" }, null, ctx)).toEqual({
      type: "modal",
      displayType: "modal",
      targetSurface: "all",
      level: "info",
      title: "Hi",
      body: "Text",
      ctaText: "",
      ctaUrl: "",
      minVersion: "",
      maxVersion: "",
      startAt: "2025-06-15T12:00:00.000Z",
      expiresAt: "",
      dismissKey: "gen-1",
      testOnly: false,
      app: "",
      locales: {},
    });
  });
  test("every field given, canonicalised", () => {
    const f = resolveAnnouncement(
      {
        title: "T",
        body: "B",
        type: "banner",
        displayType: "toast",
        targetSurface: "home",
        level: "critical",
        app: " myapp ",
        ctaText: " Go ",
        ctaUrl: "myapp://settings/update",
        minVersion: "v1.2",
        maxVersion: "1.10.0",
        startAt: "2025-06-01T08:00:00+08:00",
        expiresAt: "2025-07-01T00:00:00Z",
        dismissKey: "k-1",
        testOnly: true,
        locales: { zh_CN: { title: " 标题 ", body: "正文" }, fr: { title: "" } },
      },
      null,
      ctx,
    );
    expect(f).toMatchObject({
      app: "myapp",
      ctaText: "Go",
      minVersion: "1.2",
      maxVersion: "1.10.0",
      startAt: "2025-06-01T00:00:00.000Z",
      expiresAt: "2025-07-01T00:00:00.000Z",
      dismissKey: "k-1",
      locales: { "zh-CN": { title: "标题", body: "正文" } },
    });
  });

  const bad: Array<[string, AnnouncementInput, string]> = [
    ["no title", { body: "b" }, "title"],
    ["blank title", { title: "  ", body: "b" }, "title"],
    ["no body", { title: "t" }, "body"],
    ["blank body", { title: "t", body: " \n " }, "body"],
    ["bad min version", { title: "t", body: "b", minVersion: "latest" }, "minVersion"],
    ["bad max version", { title: "t", body: "b", maxVersion: "2.x" }, "maxVersion"],
    ["min above max", { title: "t", body: "b", minVersion: "1.10", maxVersion: "1.9" }, "minVersion"],
    ["time without zone", { title: "t", body: "b", startAt: "2025-06-01T08:00:00" }, "startAt"],
    ["bare date", { title: "t", body: "b", expiresAt: "2026-01-01" }, "expiresAt"],
    ["a day not on the calendar", { title: "t", body: "b", expiresAt: "2026-02-30T00:00:00Z" }, "expiresAt"],
    ["not a time", { title: "t", body: "b", expiresAt: "tomorrow" }, "expiresAt"],
    ["impossible date", { title: "t", body: "b", expiresAt: "2025-13-45T00:00:00Z" }, "expiresAt"],
    ["expiry before start", { title: "t", body: "b", startAt: "2025-06-02T00:00:00Z", expiresAt: "2025-06-01T00:00:00Z" }, "expiresAt"],
    ["expiry equal to start", { title: "t", body: "b", startAt: "2025-06-02T00:00:00Z", expiresAt: "2025-06-02T00:00:00Z" }, "expiresAt"],
    ["neither dismissible nor expiring", { title: "t", body: "b", dismissKey: "" }, "dismissKey"],
    ["relative cta url", { title: "t", body: "b", ctaUrl: "/download" }, "ctaUrl"],
    ["javascript cta url", { title: "t", body: "b", ctaUrl: "javascript:alert(1)" }, "ctaUrl"],
    ["data cta url", { title: "t", body: "b", ctaUrl: "data:text/html,hi" }, "ctaUrl"],
    ["JavaScript in capitals", { title: "t", body: "b", ctaUrl: "JavaScript:alert(1)" }, "ctaUrl"],
    ["a tab inside the scheme", { title: "t", body: "b", ctaUrl: "java\tscript:alert(1)" }, "ctaUrl"],
    ["vbscript cta url", { title: "t", body: "b", ctaUrl: "vbscript:msgbox" }, "ctaUrl"],
    ["file cta url", { title: "t", body: "b", ctaUrl: "file:///etc/passwd" }, "ctaUrl"],
    ["blob cta url", { title: "t", body: "b", ctaUrl: "blob:https://e.com/1" }, "ctaUrl"],
    ["about cta url", { title: "t", body: "b", ctaUrl: "about:blank" }, "ctaUrl"],
    ["no scheme", { title: "t", body: "b", ctaUrl: "example.com/download" }, "ctaUrl"],
    ["protocol-relative", { title: "t", body: "b", ctaUrl: "//example.com/download" }, "ctaUrl"],
    ["https without a host", { title: "t", body: "b", ctaUrl: "https:example.com" }, "ctaUrl"],
    ["https with nothing after", { title: "t", body: "b", ctaUrl: "https://" }, "ctaUrl"],
    ["a space inside", { title: "t", body: "b", ctaUrl: "https://e.com/a b" }, "ctaUrl"],
    ["a scheme alone", { title: "t", body: "b", ctaUrl: "myapp:" }, "ctaUrl"],
    ["bad locale tag", { title: "t", body: "b", locales: { "english please": { title: "x" } } }, "locales.english please"],
    ["overlong locale tag", { title: "t", body: "b", locales: { ["a-" + "b".repeat(40)]: { title: "x" } } }, "locales.a-" + "b".repeat(40)],
    ["one tag twice", { title: "t", body: "b", locales: { zh_CN: { title: "x" }, "zh-cn": { title: "y" } } }, "locales.zh-cn"],
    ["one tag twice, in two cases", { title: "t", body: "b", locales: { "zh-CN": { title: "x" }, "ZH-cn": { title: "y" } } }, "locales.ZH-cn"],
  ];
  for (const [title, input, param] of bad) {
    test(`400 ${title}`, () => {
      const e = thrownAppError(() => resolveAnnouncement(input, null, ctx));
      expect(e.status).toBe(400);
      expect(e.code).toBe("invalid_request");
      expect(e.param).toBe(param);
    });
  }
  test("CTA links: http(s) and app links are kept as typed", () => {
    for (const url of ["https://example.com/download?x=1#y", "http://intranet.local/update", "myapp://settings/update", "ms-settings:windowsupdate", "mailto:support@example.com"]) {
      expect(resolveAnnouncement({ title: "t", body: "b", ctaUrl: ` ${url} ` }, null, ctx).ctaUrl).toBe(url);
    }
  });
  test("a refused CTA link says what is accepted", () => {
    expect(thrownAppError(() => resolveAnnouncement({ title: "t", body: "b", ctaUrl: "/download" }, null, ctx)).message).toMatch(/https:\/\/.*app link such as myapp:\/\/settings/);
    expect(thrownAppError(() => resolveAnnouncement({ title: "t", body: "b", ctaUrl: "javascript:alert(1)" }, null, ctx)).message).toContain("may not use the javascript: scheme");
  });
  test("a zone-less time says a zone is needed", () => {
    expect(thrownAppError(() => resolveAnnouncement({ title: "t", body: "b", startAt: "2026-01-01" }, null, ctx)).message).toMatch(/'startAt' must be an ISO 8601 date-time with a time zone .* got '2026-01-01'/);
  });
  test("not dismissible is fine when it expires", () => {
    const f = resolveAnnouncement({ title: "t", body: "b", dismissKey: "", expiresAt: "2025-06-16T00:00:00Z" }, null, ctx);
    expect(f.dismissKey).toBe("");
  });
});

describe("resolveAnnouncement: update", () => {
  const base: AnnouncementFields = resolveAnnouncement(
    { title: "T", body: "B", dismissKey: "k1", expiresAt: "2025-07-01T00:00:00Z", minVersion: "1.0", locales: { de: { title: "Hallo" } } },
    null,
    ctx,
  );
  test("only the given fields change", () => {
    const f = resolveAnnouncement({ level: "warning" }, base, ctx);
    expect(f).toEqual({ ...base, level: "warning" });
  });
  test("the stored startAt is kept (not moved to now)", () => {
    const f = resolveAnnouncement({ title: "New" }, { ...base, startAt: "2025-01-01T00:00:00.000Z" }, { ...ctx, now: NOW + 1e9 });
    expect(f.startAt).toBe("2025-01-01T00:00:00.000Z");
  });
  test("empty strings clear bounds and expiry", () => {
    const f = resolveAnnouncement({ minVersion: "", expiresAt: "" }, base, ctx);
    expect(f.minVersion).toBe("");
    expect(f.expiresAt).toBe("");
  });
  test("clearing the expiry of a non-dismissible item is refused", () => {
    const nd = { ...base, dismissKey: "" };
    expect(thrownAppError(() => resolveAnnouncement({ expiresAt: "" }, nd, ctx)).param).toBe("dismissKey");
  });
  test("an update cannot empty the title", () => expect(thrownAppError(() => resolveAnnouncement({ title: "" }, base, ctx)).param).toBe("title"));
  test("locales are replaced as a whole", () => {
    expect(resolveAnnouncement({ locales: { fr: { title: "Salut" } } }, base, ctx).locales).toEqual({ fr: { title: "Salut" } });
  });
});

describe("reshowKey", () => {
  test("generated key differs from the current one", () => {
    const keys = ["same", "same", "new"];
    expect(reshowKey("same", undefined, () => keys.shift()!)).toBe("new");
  });
  test("a chosen key is used", () => expect(reshowKey("k1", "k2", () => "unused")).toBe("k2"));
  test("the same key is refused: nothing would be re-shown", () => {
    expect(thrownAppError(() => reshowKey("k1", "k1", () => "x")).param).toBe("dismissKey");
  });
});

describe("announcementStatus", () => {
  const at = (startAt: string, expiresAt: string) => announcementStatus({ startAt, expiresAt }, NOW);
  test("scheduled", () => expect(at("2025-06-15T12:00:00.001Z", "")).toBe("scheduled"));
  test("active from start", () => expect(at("2025-06-15T12:00:00.000Z", "")).toBe("active"));
  test("active without window", () => expect(at("", "")).toBe("active"));
  test("expired at expiry", () => expect(at("", "2025-06-15T12:00:00.000Z")).toBe("expired"));
  test("active 1 ms before expiry", () => expect(at("", "2025-06-15T12:00:00.001Z")).toBe("active"));
});

describe("canonicalTime", () => {
  test("forms", () => {
    expect(canonicalTime("2025-06-01T08:00+08:00", "x")).toBe("2025-06-01T00:00:00.000Z");
    expect(canonicalTime("2025-06-01T08:00:00-0130", "x")).toBe("2025-06-01T09:30:00.000Z");
    expect(canonicalTime("2025-06-01T08:00:00.5z", "x")).toBe("2025-06-01T08:00:00.500Z");
    expect(canonicalTime("  ", "x")).toBe("");
  });
  test("no zone, no time or no real day: refused", () => {
    for (const v of ["2025-06-01", "2025-06-01T08:00", "2025-06-01T08:00:00", "2025-06-01 08:00:00Z", "2025-06-31T00:00:00Z", "2025-06-01T08:00:00+25:00"]) {
      expect(thrownAppError(() => canonicalTime(v, "startAt")).param).toBe("startAt");
    }
  });
});

describe("checkInput (the schema the admin API and the CLI share)", () => {
  test("valid input passes unchanged", () => {
    const v = { title: "t", body: "b", level: "warning", testOnly: true };
    expect(checkInput(AnnouncementInput, v)).toEqual(v as never);
  });
  const bad: Array<[string, unknown, string | null]> = [
    ["unknown field (a typo) is refused, not dropped", { title: "t", expiresat: "x" }, "expiresat"],
    ["level outside the set", { level: "urgent" }, "level"],
    ["surface outside the set", { targetSurface: "everywhere" }, "targetSurface"],
    ["overlong title", { title: "x".repeat(201) }, "title"],
    ["overlong body", { body: "x".repeat(10_001) }, "body"],
    ["overlong cta url", { ctaUrl: "https://e.com/" + "x".repeat(2048) }, "ctaUrl"],
    ["overlong app", { app: "a".repeat(129) }, "app"],
    ["type with spaces", { type: "big modal" }, "type"],
    ["dismissKey with a space", { dismissKey: "a b" }, "dismissKey"],
    ["overlong dismissKey", { dismissKey: "k".repeat(129) }, "dismissKey"],
    ["testOnly as a string", { testOnly: "yes" }, "testOnly"],
    ["unknown locale text field", { locales: { de: { subtitle: "x" } } }, "locales.de.subtitle"],
    ["overlong locale title", { locales: { de: { title: "x".repeat(201) } } }, "locales.de.title"],
    ["not an object", [], null],
  ];
  for (const [title, value, param] of bad) {
    test(`400 ${title}`, () => {
      const e = thrownAppError(() => checkInput(AnnouncementInput, value));
      expect(e.status).toBe(400);
      expect(e.param).toBe(param);
    });
  }
  test("the union error names the allowed values", () => {
    expect(thrownAppError(() => checkInput(AnnouncementInput, { level: "urgent" })).message).toContain("info, warning, critical");
  });
  test("reshow body", () => {
    expect(checkInput(ReshowInput, {})).toEqual({});
    expect(thrownAppError(() => checkInput(ReshowInput, { dismissKey: "" })).param).toBe("dismissKey");
  });
});

describe("CLI flags -> shared input", () => {
  test("OPERATOR.md options map to the schema fields", () => {
    const input = announcementInputFromFlags(
      {
        title: "T",
        body: "B",
        type: "modal",
        "display-type": "modal",
        "target-surface": "client",
        level: "critical",
        app: "myapp",
        "cta-text": "Go",
        "cta-url": "https://e.com",
        "min-version": "1.0",
        "max-version": "none",
        "start-at": "now",
        "expires-at": "never",
        "dismiss-key": "k",
        "test-only": true,
      },
      null,
      NOW,
    );
    expect(input).toEqual({
      title: "T",
      body: "B",
      type: "modal",
      displayType: "modal",
      targetSurface: "client",
      level: "critical",
      app: "myapp",
      ctaText: "Go",
      ctaUrl: "https://e.com",
      minVersion: "1.0",
      maxVersion: "",
      startAt: "2025-06-15T12:00:00.000Z",
      expiresAt: "",
      dismissKey: "k",
      testOnly: true,
    });
  });
  test("flags not given are absent (an update changes nothing else)", () => {
    expect(announcementInputFromFlags({ "not-test-only": true }, null, NOW)).toEqual({ testOnly: false });
  });
  test("conflicting test flags", () => {
    expect(() => announcementInputFromFlags({ "test-only": true, "not-test-only": true }, null, NOW)).toThrow(UsageError);
  });
  test("bad values are refused by the shared schema", () => {
    expect(thrownAppError(() => announcementInputFromFlags({ level: "loud" }, null, NOW)).param).toBe("level");
  });
  test("--locale-text merges onto the stored texts", () => {
    const input = announcementInputFromFlags({ "locale-text": ["zh-CN.body=正文", "de.cta-text=Los"] }, { "zh-cn": { title: "标题" } }, NOW);
    expect(input.locales).toEqual({ "zh-cn": { title: "标题", body: "正文" }, de: { ctaText: "Los" } });
  });
  test("--clear-locales starts from nothing", () => {
    expect(announcementInputFromFlags({ "clear-locales": true }, { de: { title: "x" } }, NOW).locales).toEqual({});
  });
  test("an empty text removes a field, and an empty entry disappears", () => {
    expect(applyLocaleTexts({ de: { title: "x", body: "y" } }, ["de.title="])).toEqual({ de: { body: "y" } });
    expect(applyLocaleTexts({ de: { title: "x" } }, ["DE.title="])).toEqual({});
  });
  test("text may contain = and .", () => {
    expect(applyLocaleTexts({}, ["en.body=a=b. c"])).toEqual({ en: { body: "a=b. c" } });
  });
  for (const spec of ["zh-CN=x", "zh-CN.subtitle=x", ".title=x", "title"]) {
    test(`malformed --locale-text ${spec}`, () => expect(() => applyLocaleTexts({}, [spec])).toThrow(UsageError));
  }
});
