/**
 * The one schema of announcement fields that the admin API and `gantry announcements` share, and the pure
 * rules that turn an input (plus the stored item, on update) into a complete, valid announcement.
 * Overlong or malformed values are refused with a 400, never truncated.
 */
import { Value } from "@sinclair/typebox/value";
import { Type as t, type Static, type TSchema } from "@sinclair/typebox";
import { firstControl } from "../../../rules/control-chars";
import { AppError } from "../../../errors";
import { normalizeLocale } from "./announcements";
import type { Announcement, AnnouncementFields, AnnouncementLevel, LocaleText, TargetSurface } from "./announcement-types";
import { compareParsed, normalizeVersion, parseVersion } from "../../releases/rules/versions";
import { parseZonedTime, ZONED_TIME_EXAMPLE } from "../../../rules/time-input";

/** Bounds of every stored text (characters). */
export const ANNOUNCEMENT_LIMITS = {
  title: 200,
  body: 10_000,
  ctaText: 100,
  ctaUrl: 2048,
  kind: 32,
  app: 128,
  version: 64,
  time: 64,
  dismissKey: 128,
  locales: 50,
} as const;

const L = ANNOUNCEMENT_LIMITS;
/** `type` and `displayType` are an open set passed through to clients: a short identifier. */
const Kind = t.String({ minLength: 1, maxLength: L.kind, pattern: "^[A-Za-z][A-Za-z0-9_.-]*$" });
const Text = (max: number) => t.String({ maxLength: max });

export const LocaleTextInput = t.Object(
  { title: t.Optional(Text(L.title)), body: t.Optional(Text(L.body)), ctaText: t.Optional(Text(L.ctaText)) },
  { additionalProperties: false },
);

export const AnnouncementInput = t.Object(
  {
    title: t.Optional(Text(L.title)),
    body: t.Optional(Text(L.body)),
    type: t.Optional(Kind),
    displayType: t.Optional(Kind),
    targetSurface: t.Optional(t.Union([t.Literal("client"), t.Literal("home"), t.Literal("all")])),
    level: t.Optional(t.Union([t.Literal("info"), t.Literal("warning"), t.Literal("critical")])),
    /** "" = any app. */
    app: t.Optional(Text(L.app)),
    ctaText: t.Optional(Text(L.ctaText)),
    /** "" = no button link; else https://…, http://… or an app link (myapp://…); see checkCtaUrl. */
    ctaUrl: t.Optional(Text(L.ctaUrl)),
    /** "" = no bound. */
    minVersion: t.Optional(Text(L.version)),
    maxVersion: t.Optional(Text(L.version)),
    /** ISO 8601 date-time with a time zone (Z or ±hh:mm); a bare date or a zone-less time is refused. "" = none. */
    startAt: t.Optional(Text(L.time)),
    expiresAt: t.Optional(Text(L.time)),
    /** Visible ASCII, no spaces; "" = not dismissible (then expiresAt is required). */
    dismissKey: t.Optional(t.String({ maxLength: L.dismissKey, pattern: "^[!-~]*$" })),
    testOnly: t.Optional(t.Boolean()),
    /** Replaces all per-locale texts: language tag -> texts. */
    locales: t.Optional(t.Record(t.String(), LocaleTextInput, { maxProperties: L.locales })),
  },
  { additionalProperties: false },
);
export type AnnouncementInput = Static<typeof AnnouncementInput>;

/** Body of the re-show operation: a chosen new key, or none for a generated one. */
export const ReshowInput = t.Object(
  { dismissKey: t.Optional(t.String({ minLength: 1, maxLength: L.dismissKey, pattern: "^[!-~]+$" })) },
  { additionalProperties: false },
);
export type ReshowInput = Static<typeof ReshowInput>;

/**
 * Checks a decoded body against a schema of this file. Done by hand rather than by Elysia's `body:` option,
 * because Elysia strips unknown fields before validating: a typo (`expiresat`) must be refused, not ignored.
 */
export function checkInput<S extends TSchema>(schema: S, value: unknown): Static<S> {
  if (Value.Check(schema, value)) return value as Static<S>;
  const e = [...Value.Errors(schema, value)][0];
  const param = e?.path ? e.path.replace(/^\//, "").replaceAll("/", ".") : null;
  // "Expected union value" says nothing to an operator; name the allowed values instead.
  const options = (e?.schema as { anyOf?: Array<{ const?: unknown }> } | undefined)?.anyOf?.map((o) => o.const);
  const detail = options && options.every((o) => typeof o === "string") ? `must be one of ${options.join(", ")}` : (e?.message ?? "unexpected value");
  const message = param ? `Invalid '${param}': ${detail}.` : `Invalid input: ${detail}.`;
  throw new AppError("invalid_request", message, { param });
}


export interface ResolveContext {
  now: number;
  /** A fresh dismissKey for a new item; injected so this stays pure and testable. */
  newDismissKey: () => string;
}

function bad(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

/**
 * A time needs a zone, as the CLI's help says: `2025-06-01T08:00` would be read in the server's local zone and a
 * bare date is midnight in no stated zone, so both are refused (see time-input.ts). Output is the canonical
 * `toISOString()` form, or "" for none.
 */
export function canonicalTime(value: string, param: string): string {
  const v = value.trim();
  if (v === "") return "";
  const ms = parseZonedTime(v);
  if (ms === null) {
    throw bad(param, `'${param}' must be an ISO 8601 date-time with a time zone (e.g. ${ZONED_TIME_EXAMPLE}), got '${v.slice(0, 40)}'.`);
  }
  return new Date(ms).toISOString();
}

function canonicalVersion(value: string, param: string): string {
  const v = value.trim();
  if (v === "") return "";
  if (!parseVersion(v)) throw bad(param, `'${param}' must be a dotted numeric version (e.g. 1.2.0), got '${v.slice(0, 40)}'.`);
  return normalizeVersion(v);
}

/**
 * Schemes a link may never use, whatever the operator means: they run script or show local or inline content
 * in the page or app that renders the button.
 */
const FORBIDDEN_SCHEMES = new Set(["javascript", "vbscript", "data", "file", "blob", "about", "filesystem", "view-source"]);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * "" or an absolute URL: `http(s)://host…`, or an app link (`myapp://settings`, `ms-settings:windowsupdate`),
 * since a desktop app's update notice often opens a page of the app itself. The scheme is read from the text as
 * typed (no URL-parser normalisation that a renderer might undo), and no spaces or control characters are
 * allowed anywhere (`java\tscript:` is still javascript to a browser).
 */
export function checkCtaUrl(value: string): string {
  const v = value.trim();
  if (v === "") return "";
  const expected = "'ctaUrl' must be an absolute URL: https://… (or http://…), or an app link such as myapp://settings.";
  if (/[\s\x00-\x1f\x7f]/.test(v)) throw bad("ctaUrl", `${expected} It may not contain spaces or control characters.`);
  const scheme = SCHEME.exec(v)?.[1]?.toLowerCase();
  if (!scheme) throw bad("ctaUrl", expected);
  if (FORBIDDEN_SCHEMES.has(scheme)) throw bad("ctaUrl", `'ctaUrl' may not use the ${scheme}: scheme.`);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw bad("ctaUrl", expected);
  }
  if (scheme === "http" || scheme === "https") {
    if (!/^https?:\/\/[^/?#]/i.test(v) || url.hostname === "") throw bad("ctaUrl", `${expected} An http(s) link needs a host (https://example.com/…).`);
  } else if (v.length === scheme.length + 1) {
    throw bad("ctaUrl", `${expected} '${scheme}:' alone opens nothing.`);
  }
  return v;
}

/** RFC 5646 asks implementations to support tags of at least 35 characters; longer ones are not real tags. */
const MAX_TAG_LENGTH = 35;

/** Keys normalised (`zh_CN`, `zh-cn` -> `zh-CN`), empty texts and empty entries dropped; two keys for one tag are refused. */
function canonicalLocales(locales: Record<string, LocaleText>): Record<string, LocaleText> {
  const out: Record<string, LocaleText> = {};
  for (const [key, text] of Object.entries(locales)) {
    const tag = key.length <= MAX_TAG_LENGTH ? normalizeLocale(key) : null;
    if (!tag) throw bad(`locales.${key}`, `'${key.slice(0, 40)}' is not a language tag (e.g. zh-CN).`);
    if (out[tag]) throw bad(`locales.${key}`, `Language tag '${tag}' is given twice.`);
    const entry: LocaleText = {};
    for (const f of ["title", "body", "ctaText"] as const) {
      const v = f === "body" ? text[f] : text[f]?.trim();
      if (v) entry[f] = v;
    }
    if (Object.keys(entry).length > 0) out[tag] = entry;
  }
  return out;
}

/**
 * Texts shown in clients, the back office and terminals carry no control characters (an ESC in a title would
 * drive the terminal of whoever lists announcements); a body may have tabs and line breaks.
 */
function refuseControls(input: AnnouncementInput): void {
  const check = (param: string, value: string | undefined, lines: boolean) => {
    const found = value === undefined ? null : firstControl(value, lines);
    if (found) throw bad(param, `'${param}' may not contain control characters${lines ? " other than tabs and line breaks" : ""} (it holds ${found}).`);
  };
  for (const f of ["title", "ctaText", "app"] as const) check(f, input[f], false);
  check("body", input.body, true);
  for (const [tag, text] of Object.entries(input.locales ?? {})) {
    check(`locales.${tag}.title`, text.title, false);
    check(`locales.${tag}.ctaText`, text.ctaText, false);
    check(`locales.${tag}.body`, text.body, true);
  }
}

const DEFAULTS = {
  type: "modal",
  displayType: "modal",
  // An operator who names no surface has not restricted where the item shows.
  targetSurface: "all" as TargetSurface,
  level: "info" as AnnouncementLevel,
};

/**
 * The complete fields after applying `input` to `base` (null = create). Create needs a title and a body;
 * startAt defaults to now and dismissKey to a generated one. The item must expire or be dismissible, or both
 * (GitHub's rule for announcement banners): `dismissKey: ""` is accepted only together with `expiresAt`.
 */
export function resolveAnnouncement(input: AnnouncementInput, base: AnnouncementFields | null, ctx: ResolveContext): AnnouncementFields {
  refuseControls(input);
  const title = (input.title ?? base?.title ?? "").trim();
  if (title === "") throw bad("title", base ? "'title' may not be empty." : "An announcement needs a 'title'.");
  const body = input.body ?? base?.body;
  if (body === undefined || body.trim() === "") throw bad("body", base ? "'body' may not be empty." : "An announcement needs a 'body'.");

  const minVersion = canonicalVersion(input.minVersion ?? base?.minVersion ?? "", "minVersion");
  const maxVersion = canonicalVersion(input.maxVersion ?? base?.maxVersion ?? "", "maxVersion");
  if (minVersion && maxVersion && compareParsed(parseVersion(minVersion)!, parseVersion(maxVersion)!) > 0) {
    throw bad("minVersion", `'minVersion' ${minVersion} is above 'maxVersion' ${maxVersion}.`);
  }

  const startAt = input.startAt !== undefined ? canonicalTime(input.startAt, "startAt") : base ? base.startAt : new Date(ctx.now).toISOString();
  const expiresAt = canonicalTime(input.expiresAt ?? base?.expiresAt ?? "", "expiresAt");
  if (startAt && expiresAt && Date.parse(expiresAt) <= Date.parse(startAt)) {
    throw bad("expiresAt", "'expiresAt' must be later than 'startAt'.");
  }

  const dismissKey = input.dismissKey !== undefined ? input.dismissKey : base ? base.dismissKey : ctx.newDismissKey();
  if (dismissKey === "" && expiresAt === "") {
    throw bad("dismissKey", "An announcement must expire ('expiresAt') or be dismissible ('dismissKey'), or both.");
  }

  return {
    type: input.type ?? base?.type ?? DEFAULTS.type,
    displayType: input.displayType ?? base?.displayType ?? DEFAULTS.displayType,
    targetSurface: input.targetSurface ?? base?.targetSurface ?? DEFAULTS.targetSurface,
    level: input.level ?? base?.level ?? DEFAULTS.level,
    title,
    body,
    ctaText: (input.ctaText ?? base?.ctaText ?? "").trim(),
    ctaUrl: checkCtaUrl(input.ctaUrl ?? base?.ctaUrl ?? ""),
    minVersion,
    maxVersion,
    startAt,
    expiresAt,
    dismissKey,
    testOnly: input.testOnly ?? base?.testOnly ?? false,
    app: (input.app ?? base?.app ?? "").trim(),
    locales: canonicalLocales(input.locales ?? base?.locales ?? {}),
  };
}

/** Re-show = a new dismissKey: clients that stored the old one show the item again. It must really change. */
export function reshowKey(current: string, requested: string | undefined, newDismissKey: () => string): string {
  if (requested === undefined) {
    let key = newDismissKey();
    while (key === current) key = newDismissKey();
    return key;
  }
  if (requested === current) throw bad("dismissKey", "Re-show needs a dismissKey different from the current one.");
  return requested;
}

export type AnnouncementStatus = "scheduled" | "active" | "expired";

/** For the back office's list: where the item stands in its display window at `now`. */
export function announcementStatus(item: Pick<Announcement, "startAt" | "expiresAt">, now: number): AnnouncementStatus {
  if (item.expiresAt && Date.parse(item.expiresAt) <= now) return "expired";
  if (item.startAt && Date.parse(item.startAt) > now) return "scheduled";
  return "active";
}

/** What the admin API and `gantry announcements --json` show: every stored field, plus status and times. */
export function announcementAdminView(item: Announcement & { createdAt: number; updatedAt: number }, now: number) {
  return {
    id: item.id,
    type: item.type,
    displayType: item.displayType,
    targetSurface: item.targetSurface,
    level: item.level,
    title: item.title,
    body: item.body,
    ctaText: item.ctaText,
    ctaUrl: item.ctaUrl,
    minVersion: item.minVersion,
    maxVersion: item.maxVersion,
    startAt: item.startAt,
    expiresAt: item.expiresAt,
    dismissKey: item.dismissKey,
    testOnly: item.testOnly,
    app: item.app,
    locales: item.locales,
    status: announcementStatus(item, now),
    createdAt: new Date(item.createdAt).toISOString(),
    updatedAt: new Date(item.updatedAt).toISOString(),
  };
}
export type AnnouncementAdminView = ReturnType<typeof announcementAdminView>;
