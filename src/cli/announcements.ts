/**
 * `gantry announcements ...`: create, list, show, update, reshow, delete, preview — the same service and
 * schema as /admin/api/announcements, on the same database (a running server sees changes at once).
 */
import { parseAnnouncementQuery } from "../site/announcements";
import {
  AnnouncementInput,
  announcementAdminView,
  checkInput,
  type AnnouncementAdminView,
} from "../site/announcement-input";
import type { LocaleText } from "../site/types";
import { UsageError, commandDeps, configFrom, parse, printJson, settingsHelp, table } from "./common";

const OPTIONS = {
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
  // preview
  surface: { type: "string" },
  version: { type: "string" },
  locale: { type: "string" },
  test: { type: "boolean" },
  json: { type: "boolean" },
} as const;

export const ANNOUNCEMENTS_HELP = `Usage: gantry announcements <command> [options]

Commands:
  create --title T --body B [fields] [--json]   create an announcement (shown from now unless --start-at)
  list [--json]                                 all announcements with their status (scheduled, active, expired)
  show ID [--json]
  update ID [fields] [--json]                   change the given fields only
  reshow ID [--dismiss-key K] [--json]          set a new dismissKey (generated unless given): clients that
                                                dismissed the announcement show it again
  delete ID
  preview [--surface client|home] [--app NAME] [--version V] [--locale TAG] [--test]
                                                print the public document a client with these values gets

Fields:
  --title T  --body B  --cta-text T  --cta-url URL
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
  --clear-locales                                remove every per-locale text (before --locale-text applies)

Settings (every command):
${settingsHelp()}`;

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

export async function announcementsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, OPTIONS as any) as { values: Values; positionals: string[] };
  if (!sub || values.help || sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(ANNOUNCEMENTS_HELP + "\n");
    return sub ? 0 : 2;
  }
  const deps = commandDeps(configFrom(values));
  const service = deps.engagement.announcements;
  const show = (item: Parameters<typeof announcementAdminView>[0]) => {
    const v = announcementAdminView(item, deps.now());
    if (values.json) printJson(v);
    else process.stdout.write(describe(v) + "\n");
  };
  const id = () => {
    if (!positionals[0]) throw new UsageError(`gantry announcements ${sub} needs an announcement id`);
    return positionals[0];
  };
  try {
    switch (sub) {
      case "create": {
        if (values.title === undefined || values.body === undefined) throw new UsageError("gantry announcements create needs --title T and --body B");
        show(service.create(announcementInputFromFlags(values, null, deps.now())));
        return 0;
      }
      case "list": {
        const views = service.list().map((a) => announcementAdminView(a, deps.now()));
        if (values.json) printJson(views);
        else if (views.length === 0) process.stdout.write('No announcements yet. Create one with: gantry announcements create --title T --body B\n');
        else {
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
          process.stdout.write(table(rows, ["id", "status", "level", "surface", "app", "versions", "test", "expires", "dismissKey", "title"]) + "\n");
        }
        return 0;
      }
      case "show":
        show(service.get(id()));
        return 0;
      case "update": {
        const base = service.get(id());
        show(service.update(base.id, announcementInputFromFlags(values, base.locales, deps.now())));
        return 0;
      }
      case "reshow": {
        const key = values["dismiss-key"] as string | undefined;
        if (key !== undefined && key.trim() === "") throw new UsageError("reshow needs a non-empty --dismiss-key, or none for a generated one");
        show(service.reshow(id(), key));
        return 0;
      }
      case "delete": {
        const item = service.delete(id());
        process.stdout.write(`announcement ${item.id} (${clip(item.title, 40)}) deleted\n`);
        return 0;
      }
      case "preview": {
        const query = parseAnnouncementQuery({
          surface: values.surface,
          app: values.app,
          version: values.version,
          locale: values.locale,
          test: values.test ? "1" : undefined,
        });
        printJson(service.document(query));
        return 0;
      }
      default:
        throw new UsageError(`unknown command 'gantry announcements ${sub}'`);
    }
  } finally {
    deps.close();
    deps.db.close();
  }
}
