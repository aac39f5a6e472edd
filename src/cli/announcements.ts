/**
 * `gantry announcements ...`: create, list, show, update, reshow, delete, preview — the same service and
 * schema as /admin/api/announcements, on the same database (a running server sees changes at once).
 */
import { parseAnnouncementQuery } from "../site/announcements/rules/announcements";
import {
  AnnouncementInput,
  announcementAdminView,
  checkInput,
  resolveAnnouncement,
  type AnnouncementAdminView,
} from "../site/announcements/rules/announcement-input";
import type { LocaleText } from "../site/announcements/announcement-repository";
import type { Group } from "./command";
import { STORE_SETTINGS, UsageError, print, printJson, table, withStore } from "./common";

const FIELD_OPTIONS = {
  title: { type: "string" },
  body: { type: "string" },
  type: { type: "string" },
  "display-type": { type: "string" },
  "target-surface": { type: "string" },
  level: { type: "string" },
  app: { type: "string" },
  "cta-text": { type: "string" },
  "cta-url": { type: "string" },
  "min-version": { type: "string" },
  "max-version": { type: "string" },
  "start-at": { type: "string" },
  "expires-at": { type: "string" },
  "dismiss-key": { type: "string" },
  "test-only": { type: "boolean" },
  "not-test-only": { type: "boolean" },
  "locale-text": { type: "string", multiple: true },
  "clear-locales": { type: "boolean" },
} as const;
const JSON_OPTION = { json: { type: "boolean" } } as const;

const FIELDS_HELP = `Fields:
  --title T  --body B  --cta-text T
  --cta-url URL                                  http(s)://host/... or an app link (myapp://settings);
                                                 javascript:, data:, file: and the like are refused
  --type modal  --display-type modal             (defaults: modal, modal)
  --target-surface client|home|all               (default: all)
  --level info|warning|critical                  (default: info; order of display: critical first)
  --app NAME                                     only for this app (and its -staging/-test builds); "" = any app
  --min-version V  --max-version V               version range, inclusive; "none" clears a bound
  --start-at ISO|now  --expires-at ISO|none      display window; times need a zone (Z or +08:00)
  --dismiss-key K                                default: generated. "" makes it non-dismissible, which is
                                                 allowed only with --expires-at (it must expire or be dismissible)
  --test-only | --not-test-only                  shown only with test=1/staging=1 or to test/staging app names
  --locale-text TAG.FIELD=TEXT                   per-locale text, repeatable; FIELD is title, body or cta-text;
                                                 an empty TEXT removes it. e.g. --locale-text 'zh-CN.title=维护通知'
  --clear-locales                                remove every per-locale text (before --locale-text applies)`;

type Values = Record<string, string | boolean | string[] | undefined>;

const LOCALE_FIELDS: Record<string, keyof LocaleText> = { title: "title", body: "body", "cta-text": "ctaText", ctatext: "ctaText" };

/** `zh-CN.title=Text` applied onto a copy of `base`; the language tag itself is checked by the shared rules. */
export function applyLocaleTexts(base: Record<string, LocaleText>, specs: string[]): Record<string, LocaleText> {
  const out: Record<string, LocaleText> = {};
  for (const [tag, text] of Object.entries(base)) out[tag] = { ...text };
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    const dot = eq < 0 ? -1 : spec.lastIndexOf(".", eq);
    const field = dot < 0 ? undefined : LOCALE_FIELDS[spec.slice(dot + 1, eq).toLowerCase()];
    const tag = dot < 0 ? "" : spec.slice(0, dot).trim();
    if (!field || tag === "") throw new UsageError(`--locale-text must look like TAG.FIELD=TEXT (FIELD: title, body, cta-text), got "${spec}"`);
    const key = Object.keys(out).find((k) => k.toLowerCase().replace(/_/g, "-") === tag.toLowerCase().replace(/_/g, "-")) ?? tag;
    const entry = (out[key] ??= {});
    const text = spec.slice(eq + 1);
    if (text === "") delete entry[field];
    else entry[field] = text;
    if (Object.keys(entry).length === 0) delete out[key];
  }
  return out;
}

function clearable(v: string | undefined, words: RegExp): string | undefined {
  if (v === undefined) return undefined;
  return words.test(v.trim()) ? "" : v;
}

/** Flags -> the shared AnnouncementInput, checked by the same schema as the admin API. */
export function announcementInputFromFlags(values: Values, baseLocales: Record<string, LocaleText> | null, now: number): AnnouncementInput {
  if (values["test-only"] && values["not-test-only"]) throw new UsageError("--test-only and --not-test-only exclude each other");
  const s = (k: string) => values[k] as string | undefined;
  const startAt = s("start-at");
  const input: Record<string, unknown> = {
    title: s("title"),
    body: s("body"),
    type: s("type"),
    displayType: s("display-type"),
    targetSurface: s("target-surface"),
    level: s("level"),
    app: s("app"),
    ctaText: s("cta-text"),
    ctaUrl: s("cta-url"),
    minVersion: clearable(s("min-version"), /^(none|any)$/i),
    maxVersion: clearable(s("max-version"), /^(none|any)$/i),
    startAt: startAt !== undefined && /^now$/i.test(startAt.trim()) ? new Date(now).toISOString() : startAt,
    expiresAt: clearable(s("expires-at"), /^(none|never)$/i),
    dismissKey: s("dismiss-key"),
    testOnly: values["test-only"] ? true : values["not-test-only"] ? false : undefined,
  };
  const specs = (values["locale-text"] as string[] | undefined) ?? [];
  if (values["clear-locales"] || specs.length > 0) {
    input.locales = applyLocaleTexts(values["clear-locales"] ? {} : (baseLocales ?? {}), specs);
  }
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
  return checkInput(AnnouncementInput, input);
}

function clip(text: string, n: number): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

function describe(v: AnnouncementAdminView): string {
  const range = v.minVersion || v.maxVersion ? `${v.minVersion || "*"} .. ${v.maxVersion || "*"}` : "any";
  const locales = Object.entries(v.locales).map(([tag, t]) => `${tag}: ${clip(t.title ?? "(default title)", 40)}`);
  return [
    `id:          ${v.id}`,
    `status:      ${v.status}`,
    `title:       ${v.title}`,
    `body:        ${clip(v.body, 200)}`,
    `cta:         ${v.ctaText || "-"} ${v.ctaUrl ? `-> ${v.ctaUrl}` : ""}`.trimEnd(),
    `shown on:    ${v.targetSurface} as ${v.type}/${v.displayType}, level ${v.level}${v.testOnly ? ", test builds only" : ""}`,
    `app:         ${v.app || "any"}`,
    `versions:    ${range}`,
    `window:      ${v.startAt || "always"} .. ${v.expiresAt || "never"}`,
    `dismissKey:  ${v.dismissKey || "(not dismissible)"}`,
    `locales:     ${locales.length ? locales.join("; ") : "-"}`,
  ].join("\n");
}

type Deps = Parameters<Parameters<typeof withStore>[1]>[0];

function show(deps: Deps, item: Parameters<typeof announcementAdminView>[0], json: unknown): void {
  const v = announcementAdminView(item, deps.now());
  if (json) printJson(v);
  else print(describe(v) + "\n");
}

/** The one announcement id a command names. */
function onlyId(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "needs an announcement id" : `takes one announcement id, got ${positionals.length}`);
  return positionals[0];
}

const STORE = STORE_SETTINGS;

export const announcementsGroup: Group = {
  name: "announcements",
  summary: "create, list, update, re-show and delete announcements",
  details: FIELDS_HELP,
  commands: [
    {
      name: "announcements create",
      args: "--title T --body B [fields] [--json]",
      summary: "create an announcement (shown from now unless --start-at)",
      details: FIELDS_HELP,
      options: { ...FIELD_OPTIONS, ...JSON_OPTION },
      settings: STORE,
      run: ({ values }) => {
        if (values.title === undefined || values.body === undefined) throw new UsageError("needs --title T and --body B");
        // Every rule checked before the store is opened (resolving is pure): refused input never creates a database.
        const input = announcementInputFromFlags(values, null, Date.now());
        resolveAnnouncement(input, null, { now: Date.now(), newDismissKey: () => "unused" });
        return withStore(values, async (deps) => show(deps, await deps.engagement.announcements.create(input), values.json), true);
      },
    },
    {
      name: "announcements list",
      args: "[--json]",
      summary: "all announcements with their status (scheduled, active, expired)",
      options: JSON_OPTION,
      settings: STORE,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          const views = (await deps.engagement.announcements.list()).map((a) => announcementAdminView(a, deps.now()));
          if (values.json) return printJson(views);
          if (views.length === 0) return void print("No announcements yet. Create one with: gantry announcements create --title T --body B\n");
          const rows = views.map((v) => ({
            id: v.id,
            status: v.status,
            level: v.level,
            surface: v.targetSurface,
            app: v.app || "*",
            versions: v.minVersion || v.maxVersion ? `${v.minVersion || "*"}..${v.maxVersion || "*"}` : "*",
            test: v.testOnly ? "yes" : "",
            expires: v.expiresAt || "never",
            dismissKey: v.dismissKey || "-",
            title: clip(v.title, 40),
          }));
          print(table(rows, ["id", "status", "level", "surface", "app", "versions", "test", "expires", "dismissKey", "title"]) + "\n");
        }),
    },
    {
      name: "announcements show",
      args: "ID [--json]",
      summary: "one announcement with every field",
      options: JSON_OPTION,
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const id = onlyId(positionals);
        return withStore(values, async (deps) => show(deps, await deps.engagement.announcements.get(id), values.json));
      },
    },
    {
      name: "announcements update",
      args: "ID [fields] [--json]",
      summary: "change the given fields only",
      details: FIELDS_HELP,
      options: { ...FIELD_OPTIONS, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const id = onlyId(positionals);
        return withStore(values, async (deps) => {
          const service = deps.engagement.announcements;
          const base = await service.get(id);
          show(deps, await service.update(base.id, announcementInputFromFlags(values, base.locales, deps.now())), values.json);
        });
      },
    },
    {
      name: "announcements reshow",
      args: "ID [--dismiss-key K] [--json]",
      summary: "set a new dismissKey (generated unless given): clients that dismissed it show it again",
      options: { "dismiss-key": { type: "string" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const id = onlyId(positionals);
        const key = values["dismiss-key"] as string | undefined;
        if (key !== undefined && key.trim() === "") throw new UsageError("needs a non-empty --dismiss-key, or none for a generated one");
        return withStore(values, async (deps) => show(deps, await deps.engagement.announcements.reshow(id, key), values.json));
      },
    },
    {
      name: "announcements delete",
      args: "ID",
      summary: "delete an announcement",
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const id = onlyId(positionals);
        return withStore(values, async (deps) => {
          const item = await deps.engagement.announcements.delete(id);
          print(`announcement ${item.id} (${clip(item.title, 40)}) deleted\n`);
        });
      },
    },
    {
      name: "announcements preview",
      args: "[--surface client|home] [--app NAME] [--version V] [--locale TAG] [--test]",
      summary: "print the public document a client with these values gets",
      options: { surface: { type: "string" }, app: { type: "string" }, version: { type: "string" }, locale: { type: "string" }, test: { type: "boolean" } },
      settings: STORE,
      run: ({ values }) => {
        const query = parseAnnouncementQuery({
          surface: values.surface,
          app: values.app,
          version: values.version,
          locale: values.locale,
          test: values.test ? "1" : undefined,
        });
        return withStore(values, async (deps) => printJson(await deps.engagement.announcements.document(query)));
      },
    },
  ],
};
