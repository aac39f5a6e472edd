/**
 * Rules of GET /api/v1/announcements: query validation, surface, test-only, target app, version range,
 * display window, locale texts and order. Pure: the route passes stored items and `now`.
 */
import { AppError } from "../../../errors";
import type { Announcement, AnnouncementDocument, AnnouncementQuery, AnnouncementView, LocaleText, Surface } from "./announcement-types";
import { compareParsed, normalizeVersion, parseVersion, type ParsedVersion } from "../../releases/rules/versions";
import { readParam } from "../../http/rules/query-params";

const MAX_APP_LENGTH = 128;


function bad(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

/** The spec's flag value is `1`; `true`/`false`/`0` are accepted too, and empty counts as not given. */
function parseFlag(raw: Record<string, unknown>, name: string): boolean {
  const v = readParam(raw, name).toLowerCase();
  if (v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw bad(name, `Query parameter '${name}' must be 1 or 0.`);
}

/**
 * RFC 5646's case conventions (language lower, script title, region upper), for tags that Intl does not
 * accept but our pattern does (`c`, `en-a`, grandfathered forms): they keep a stable case too.
 */
function conventionalCase(lower: string): string {
  let afterSingleton = false;
  return lower
    .split("-")
    .map((part, i) => {
      // After a singleton (`x-`, `u-`, ...) subtags are extensions or private use: no case rules apply.
      if (afterSingleton) return part;
      if (part.length === 1) {
        afterSingleton = true;
        return part;
      }
      if (i === 0) return part;
      if (part.length === 4 && /^[a-z]+$/.test(part)) return part[0]!.toUpperCase() + part.slice(1);
      if (part.length === 2 && /^[a-z]+$/.test(part)) return part.toUpperCase();
      return part;
    })
    .join("-");
}

/**
 * `zh_CN`, `ZH-cn` -> `zh-CN`; `zh_hant_tw` -> `zh-Hant-TW`. POSIX forms sent by desktop runtimes
 * (`en_US.UTF-8`, `de_DE@euro`) lose their charset and modifier. The canonical form is Intl's (which also
 * replaces deprecated tags: `iw` -> `he`), so stored tags and the back office show the case people write;
 * null when what remains is not a language tag. Tags only ever compare case-insensitively (localeKey).
 */
export function normalizeLocale(value: string): string | null {
  const lower = value.trim().replace(/[.@].*$/, "").replace(/_/g, "-").toLowerCase();
  if (!/^[a-z]{1,8}(-[a-z0-9]{1,8})*$/.test(lower)) return null;
  try {
    return Intl.getCanonicalLocales(lower)[0] ?? conventionalCase(lower);
  } catch {
    return conventionalCase(lower);
  }
}

/** How tags are compared: case never matters (`zh-CN` = `zh-cn`). */
function localeKey(tag: string): string {
  return tag.toLowerCase();
}

/**
 * Missing `surface` means `client` (the desktop client is the main caller and older builds may omit it);
 * `all` is a target of items, not a surface a caller is on, so it is refused.
 */
export function parseAnnouncementQuery(raw: Record<string, unknown>): AnnouncementQuery {
  const surfaceRaw = readParam(raw, "surface").toLowerCase();
  let surface: Surface = "client";
  if (surfaceRaw !== "") {
    if (surfaceRaw !== "client" && surfaceRaw !== "home") throw bad("surface", "surface must be 'client' or 'home'.");
    surface = surfaceRaw;
  }

  const versionRaw = readParam(raw, "version");
  if (versionRaw !== "" && !parseVersion(versionRaw)) {
    throw bad("version", `version '${versionRaw.slice(0, 64)}' is not a dotted numeric version.`);
  }

  const localeRaw = readParam(raw, "locale");
  let locale = "";
  if (localeRaw !== "") {
    const l = normalizeLocale(localeRaw);
    if (!l) throw bad("locale", `locale '${localeRaw.slice(0, 64)}' is not a language tag.`);
    locale = l;
  }

  const app = readParam(raw, "app");
  if (app.length > MAX_APP_LENGTH) throw bad("app", `app must be at most ${MAX_APP_LENGTH} characters.`);

  const includeTest = parseFlag(raw, "test") || parseFlag(raw, "staging");
  return { app, version: versionRaw === "" ? "" : normalizeVersion(versionRaw), locale, surface, includeTest };
}

function appTokens(name: string): string[] {
  return name
    .trim()
    .toLowerCase()
    .split(/[-._\s]+/)
    .filter((t) => t.length > 0);
}

const TEST_TOKENS = new Set(["test", "staging"]);

/** `myapp-staging`, `myapp.test`, `Test_MyApp` yes; `contest`, `testing-app`, `latest` no: whole tokens only. */
export function isTestApp(name: string): boolean {
  return appTokens(name).some((t) => TEST_TOKENS.has(t));
}

/**
 * Empty target = every app; a caller without `app` sees only untargeted items. Names compare by tokens
 * (case and `-`/`.`/`_` separators do not matter), and a test or staging build also sees the items of the
 * app it is a build of (`myapp-staging` sees items for `myapp`), since that is where they are tried out.
 */
export function appMatches(target: string, app: string): boolean {
  const t = appTokens(target);
  if (t.length === 0) return true;
  const a = appTokens(app);
  if (a.length === 0) return false;
  const key = t.join("-");
  return key === a.join("-") || key === a.filter((x) => !TEST_TOKENS.has(x)).join("-");
}

/** Exact tag, then shorter prefixes (`zh-Hant-TW` -> `zh-Hant` -> `zh`), then the default text; per field; any case. */
export function pickLocaleText(
  item: Pick<Announcement, "title" | "body" | "ctaText" | "locales">,
  locale: string,
): { title: string; body: string; ctaText: string } {
  const byTag = new Map<string, LocaleText>();
  for (const [key, text] of Object.entries(item.locales ?? {})) {
    const tag = normalizeLocale(key);
    if (tag && text) byTag.set(localeKey(tag), text);
  }
  const chain: LocaleText[] = [];
  const tag = locale ? normalizeLocale(locale) : null;
  if (tag) {
    const parts = localeKey(tag).split("-");
    for (let n = parts.length; n > 0; n--) {
      const t = byTag.get(parts.slice(0, n).join("-"));
      if (t) chain.push(t);
    }
  }
  const field = (k: keyof LocaleText, fallback: string): string => {
    for (const t of chain) {
      const v = t[k];
      if (typeof v === "string" && v !== "") return v;
    }
    return fallback;
  };
  return { title: field("title", item.title), body: field("body", item.body), ctaText: field("ctaText", item.ctaText) };
}

/** Unparsable stored bounds or dates make the item invisible: an item we cannot place is not shown. */
function versionInRange(item: Announcement, version: ParsedVersion | null): boolean {
  const min = item.minVersion.trim();
  const max = item.maxVersion.trim();
  if (min === "" && max === "") return true;
  if (!version) return false;
  if (min !== "") {
    const p = parseVersion(min);
    if (!p || compareParsed(version, p) < 0) return false;
  }
  if (max !== "") {
    const p = parseVersion(max);
    if (!p || compareParsed(version, p) > 0) return false;
  }
  return true;
}

/** Shown on `startAt` (inclusive) until `expiresAt` (exclusive). */
function inWindow(item: Announcement, now: number): boolean {
  if (item.startAt.trim() !== "") {
    const start = Date.parse(item.startAt);
    if (Number.isNaN(start) || now < start) return false;
  }
  if (item.expiresAt.trim() !== "") {
    const end = Date.parse(item.expiresAt);
    if (Number.isNaN(end) || now >= end) return false;
  }
  return true;
}

export function isAnnouncementVisible(item: Announcement, query: AnnouncementQuery, now: number): boolean {
  if (item.targetSurface !== "all" && item.targetSurface !== query.surface) return false;
  if (item.testOnly && !query.includeTest && !isTestApp(query.app)) return false;
  if (!appMatches(item.app, query.app)) return false;
  const version = query.version === "" ? null : parseVersion(query.version);
  if (!versionInRange(item, version)) return false;
  return inWindow(item, now);
}

const LEVEL_RANK: Record<string, number> = { critical: 0, warning: 1, info: 2 };

function startMs(item: Announcement): number {
  const t = item.startAt.trim() === "" ? Number.NaN : Date.parse(item.startAt);
  return Number.isNaN(t) ? -Infinity : t;
}

/** Level (critical, warning, info, then anything else), newest start first, then id ascending. */
export function compareAnnouncements(a: Announcement, b: Announcement): number {
  // Own keys only: a level such as "toString" must rank as "anything else", not find Object.prototype.toString.
  const la = Object.hasOwn(LEVEL_RANK, a.level) ? LEVEL_RANK[a.level] : 3;
  const lb = Object.hasOwn(LEVEL_RANK, b.level) ? LEVEL_RANK[b.level] : 3;
  if (la !== lb) return la - lb;
  const sa = startMs(a);
  const sb = startMs(b);
  if (sa !== sb) return sb > sa ? 1 : -1;
  return a.id - b.id;
}

/** Stored timestamps are re-emitted in one form (`2025-01-02T03:04:05.000Z`) whatever the store wrote. */
function isoOrEmpty(value: string): string {
  if (value.trim() === "") return "";
  const t = Date.parse(value);
  return Number.isNaN(t) ? value : new Date(t).toISOString();
}

export function toAnnouncementView(item: Announcement, locale: string): AnnouncementView {
  const text = pickLocaleText(item, locale);
  return {
    id: item.id,
    type: item.type,
    displayType: item.displayType,
    targetSurface: item.targetSurface,
    level: item.level,
    title: text.title,
    body: text.body,
    ctaText: text.ctaText,
    ctaUrl: item.ctaUrl,
    minVersion: item.minVersion.trim(),
    maxVersion: item.maxVersion.trim(),
    startAt: isoOrEmpty(item.startAt),
    expiresAt: isoOrEmpty(item.expiresAt),
    dismissKey: item.dismissKey,
    testOnly: item.testOnly,
  };
}

export function filterAnnouncements(
  items: readonly Announcement[],
  query: AnnouncementQuery,
  now: number,
): AnnouncementView[] {
  return items
    .filter((item) => isAnnouncementVisible(item, query, now))
    .sort(compareAnnouncements)
    .map((item) => toAnnouncementView(item, query.locale));
}

export function buildAnnouncementDocument(
  items: readonly Announcement[],
  query: AnnouncementQuery,
  now: number,
): AnnouncementDocument {
  return { schema: "app.announcements.v1", surface: query.surface, announcements: filterAnnouncements(items, query, now) };
}

/**
 * The first moment after `now` at which an announcement's time window opens or closes: until then the
 * documents built now stay right (Infinity when no window edge lies ahead).
 */
export function nextVisibilityChange(items: readonly Announcement[], now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const item of items) {
    for (const edge of [item.startAt, item.expiresAt]) {
      if (edge.trim() === "") continue;
      const t = Date.parse(edge);
      if (!Number.isNaN(t) && t > now && t < next) next = t;
    }
  }
  return next;
}
