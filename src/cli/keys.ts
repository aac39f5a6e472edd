/** `gantry keys ...`: create, list, show, update, disable, enable, delete, usage — the same rules as /admin/api/keys. */
import { AppError } from "../errors";
import { checkKeyInput, keyFieldsFrom, keyView, type KeyInput } from "../gateway/keys/key-input";
import { DAY_MS, DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS, keyUsageReport, usageDays, usageSince } from "../gateway/usage/key-usage";
import { NO_USAGE, type ApiKey } from "../gateway/keys/key-repository";
import { formatBytes } from "../site/releases/sync-progress";
import type { Command, Group } from "./command";
import { STORE_SETTINGS, UsageError, print, printJson, table, withStore } from "./common";

const LIMIT_OPTIONS = {
  rpm: { type: "string" },
  rpd: { type: "string" },
  concurrency: { type: "string" },
  "quota-tokens": { type: "string" },
  balance: { type: "string" },
  "max-tokens": { type: "string" },
  "allow-models": { type: "string" },
  "deny-models": { type: "string" },
  "all-models": { type: "boolean" },
  "expires-at": { type: "string" },
  "not-before": { type: "string" },
} as const;
const JSON_OPTION = { json: { type: "boolean" } } as const;

const LIMITS_HELP = `Limits (a limit not given is unlimited; each is 1 or more: to block a key, disable it):
  --rpm N  --rpd N  --concurrency N  --quota-tokens N  --balance AMOUNT  --max-tokens N
  --allow-models a,b | --deny-models a,b | --all-models    exact ids and * globs (a list is never empty)
  --not-before ISO8601  --expires-at ISO8601               with a zone (2026-01-31T00:00Z, +08:00); not-before first`;

const UPDATE_HELP = `${LIMITS_HELP}
  "none" clears a limit (unlimited) or a date; --name NAME renames the key;
  --reset-usage starts a new quota period (usage so far no longer counts against the quota)`;

type Values = Record<string, string | boolean | undefined>;

function limit(v: string | undefined, flag: string, integer = true): number | null | undefined {
  if (v === undefined) return undefined;
  if (/^(none|unlimited|null)$/i.test(v.trim())) return null;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${flag} must be a ${integer ? "whole " : ""}number of at least 0 (or "none"), got "${v}"`);
  }
  return n;
}

function list(v: string | undefined): string[] | undefined {
  return v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter(Boolean);
}

/** The text goes on as given: the shared rules (a zone is required) check it and name the flag. */
function date(v: string | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  if (/^(none|never|null)$/i.test(v.trim())) return null;
  return v.trim();
}

/** Flags -> the shared KeyInput, validated by the same schema the admin API uses. */
export function keyInputFromFlags(values: Values): KeyInput {
  const input: Record<string, unknown> = {
    name: values.name,
    rpm: limit(values.rpm as string, "rpm"),
    rpd: limit(values.rpd as string, "rpd"),
    concurrency: limit(values.concurrency as string, "concurrency"),
    quotaTokens: limit(values["quota-tokens"] as string, "quota-tokens"),
    balance: limit(values.balance as string, "balance", false),
    maxTokens: limit(values["max-tokens"] as string, "max-tokens"),
    allowModels: list(values["allow-models"] as string),
    denyModels: list(values["deny-models"] as string),
    allModels: values["all-models"] || undefined,
    expiresAt: date(values["expires-at"] as string),
    notBefore: date(values["not-before"] as string),
    resetUsage: values["reset-usage"] || undefined,
  };
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
  return checkKeyInput(input, "cli");
}

/** An ISO time without milliseconds (and without zero seconds): 2026-03-01T00:00Z. */
function shortTime(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, "Z").replace(/:00Z$/, "Z");
}

/** The validity period in words: always, from X, until Y, or X .. Y. */
function validity(v: ReturnType<typeof keyView>): string {
  const from = v.notBefore ? shortTime(v.notBefore) : null;
  const until = v.expiresAt ? shortTime(v.expiresAt) : null;
  if (from && until) return `${from} .. ${until}`;
  return from ? `from ${from}` : until ? `until ${until}` : "always";
}

function describe(v: ReturnType<typeof keyView>): string {
  const l = v.limits;
  const models = v.modelMode ? `${v.modelMode === "allow" ? "only" : "all but"} ${v.models.join(", ")}` : "all";
  return [
    `id:          ${v.id}`,
    `name:        ${v.name}`,
    `key:         ${v.prefix}… (secret not stored)`,
    `state:       ${v.state}${v.state === "expired" || v.state === "not_yet_valid" ? " (switched on, outside its validity period)" : ""}`,
    `valid:       ${validity(v)}`,
    `models:      ${models}`,
    `limits:      rpm ${l.rpm ?? "-"}, rpd ${l.rpd ?? "-"}, concurrency ${l.concurrency ?? "-"}, max tokens ${l.maxTokens ?? "-"}`,
    `quota:       tokens ${l.quotaTokens ?? "unlimited"}, balance ${l.balance ?? "unlimited"}`,
    `usage:       ${v.usage.requests} requests, ${v.usage.tokens} tokens, spent ${v.usage.spent}`,
    `remaining:   tokens ${v.usage.remainingTokens ?? "unlimited"}, balance ${v.usage.remainingBalance ?? "unlimited"}`,
  ].join("\n");
}

/** The per-day table of `gantry keys usage`: every day of the window, days without requests as zeros. */
export function describeUsage(report: Awaited<ReturnType<typeof keyUsageReport>>, days: number, now: number): string {
  const v = report.key;
  const byDay = new Map(report.daily.map((p) => [p.bucket, p]));
  const since = usageSince(now, days);
  const rows: Array<Record<string, unknown>> = [];
  const total = { requests: 0, errors: 0, input: 0, output: 0, cost: 0 };
  for (let i = 0; i < days; i++) {
    const bucket = since + i * DAY_MS;
    const p = byDay.get(bucket);
    const day = { requests: p?.requests ?? 0, errors: p?.errors ?? 0, input: p?.inputTokens ?? 0, output: p?.outputTokens ?? 0, cost: p?.cost ?? 0 };
    total.requests += day.requests;
    total.errors += day.errors;
    total.input += day.input;
    total.output += day.output;
    total.cost += day.cost;
    // A day without a request is left out: thirty rows of zeros hide the few that say something.
    if (day.requests > 0) rows.push({ day: new Date(bucket).toISOString().slice(0, 10), ...day, cost: day.cost.toFixed(4) });
  }
  const span = `the last ${days} UTC day${days === 1 ? "" : "s"}`;
  const perDay =
    rows.length === 0
      ? [`No requests in ${span}.`]
      : [
          `Requests and tokens per UTC day with requests: ${rows.length} of ${span} (cost in the prices' currency):`,
          table([...rows, { day: "total", ...total, cost: total.cost.toFixed(4) }], ["day", "requests", "errors", "input", "output", "cost"]),
        ];
  return [
    `${v.name} (${v.id}): ${v.state}, valid ${validity(v)}`,
    ...perDay,
    `Quota period: ${v.usage.requests} requests, ${v.usage.tokens} tokens, spent ${v.usage.spent}; ` +
      `remaining: tokens ${v.usage.remainingTokens ?? "unlimited"}, balance ${v.usage.remainingBalance ?? "unlimited"}`,
    storedLine(report.storedResponses),
  ].join("\n");
}

/** What the key keeps now for previous_response_id and GET /v1/responses/{id}: not per day, so after the table. */
function storedLine(s: Awaited<ReturnType<typeof keyUsageReport>>["storedResponses"]): string {
  return `Stored responses: ${s.responses} response${s.responses === 1 ? "" : "s"}, ${formatBytes(s.bytes)}`;
}

type Deps = Parameters<Parameters<typeof withStore>[1]>[0];

/** The one key a command names (ID or NAME, exactly one). */
async function target(deps: Deps, positionals: string[]) {
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? "needs a key id or name" : `takes one key id or name, got ${positionals.length}`);
  }
  const key = await deps.keys.get(positionals[0]);
  if (!key) throw new AppError("not_found", `no key '${positionals[0]}'`);
  return key;
}

async function show(deps: Deps, id: string, json: unknown): Promise<void> {
  const key = (await deps.keys.get(id))!;
  const v = keyView(key, await deps.keys.usage(key.id), deps.now());
  if (json) printJson(v);
  else print(describe(v) + "\n");
}

const STORE = STORE_SETTINGS;
const ID = "ID|NAME";

function onKey(name: string, summary: string, act: (deps: Deps, key: ApiKey) => Promise<string>): Command {
  return {
    name: `keys ${name}`,
    args: ID,
    summary,
    positionals: true,
    settings: STORE,
    run: ({ values, positionals }) =>
      withStore(values, async (deps) => {
        print((await act(deps, await target(deps, positionals))) + "\n");
      }),
  };
}

export const keysGroup: Group = {
  name: "keys",
  summary: "manage API keys (create, list, show, update, disable, enable, delete, usage)",
  details: LIMITS_HELP,
  commands: [
    {
      name: "keys create",
      args: "--name NAME [limits] [--json]",
      summary: "create a key; its secret is shown once",
      details: LIMITS_HELP,
      options: { name: { type: "string" }, ...LIMIT_OPTIONS, ...JSON_OPTION },
      settings: STORE,
      run: ({ values }) => {
        const input = keyInputFromFlags(values as Values);
        if (!input.name) throw new UsageError("needs --name NAME");
        // Every check of the input before the store is opened: refused input never creates a database.
        const fields = keyFieldsFrom(input, null, "cli");
        return withStore(values, async (deps) => {
          if (await deps.keys.get(input.name!)) throw new AppError("conflict", `a key named '${input.name}' exists already`);
          const { key, secret } = await deps.keys.create({ ...fields, name: input.name! });
          const v = keyView(key, await deps.keys.usage(key.id), deps.now());
          if (values.json) printJson({ ...v, key: secret });
          else print(`${describe(v)}\n\nSecret (shown once, store it now):\n  ${secret}\n`);
        }, true);
      },
    },
    {
      name: "keys list",
      args: "[--json]",
      summary: "all keys with their state, validity, limits and usage",
      options: JSON_OPTION,
      settings: STORE,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          const now = deps.now();
          const [keys, usage] = await Promise.all([deps.keys.list(), deps.keys.allUsage()]);
          const views = keys.map((k) => keyView(k, usage.get(k.id) ?? NO_USAGE, now));
          if (values.json) return printJson(views);
          if (views.length === 0) return void print("No keys yet. Create one with: gantry keys create --name NAME\n");
          const rows = views.map((v) => ({
            id: v.id,
            name: v.name,
            prefix: v.prefix,
            state: v.state,
            valid: validity(v),
            rpm: v.limits.rpm,
            rpd: v.limits.rpd,
            conc: v.limits.concurrency,
            tokens: v.usage.tokens,
            remaining: v.usage.remainingTokens ?? v.usage.remainingBalance,
          }));
          print(table(rows, ["id", "name", "prefix", "state", "valid", "rpm", "rpd", "conc", "tokens", "remaining"]) + "\n");
        }),
    },
    {
      name: "keys show",
      args: `${ID} [--json]`,
      summary: "one key: state, validity, models, limits, usage in the quota period",
      options: JSON_OPTION,
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => withStore(values, async (deps) => show(deps, (await target(deps, positionals)).id, values.json)),
    },
    {
      name: "keys update",
      args: `${ID} [limits] [--name NAME] [--reset-usage] [--json]`,
      summary: "change the given limits only",
      details: UPDATE_HELP,
      options: { name: { type: "string" }, ...LIMIT_OPTIONS, "reset-usage": { type: "boolean" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const input = keyInputFromFlags(values as Values);
        return withStore(values, async (deps) => {
          const key = await target(deps, positionals);
          const other = input.name ? await deps.keys.get(input.name) : null;
          if (other && other.id !== key.id) throw new AppError("conflict", `a key named '${input.name}' exists already`);
          await deps.keys.update(key.id, keyFieldsFrom(input, key, "cli"));
          if (input.resetUsage) await deps.keys.resetUsage(key.id);
          await show(deps, key.id, values.json);
        });
      },
    },
    onKey("disable", "switch a key off (requests get 403 until enabled)", async (deps, key) => {
      await deps.keys.update(key.id, { status: "disabled" });
      return `${key.name} (${key.id}) disabled`;
    }),
    onKey("enable", "switch a key back on (its validity period still applies)", async (deps, key) => {
      await deps.keys.update(key.id, { status: "active" });
      return `${key.name} (${key.id}) enabled`;
    }),
    onKey("delete", "delete a key for good (its usage records stay)", async (deps, key) => {
      await deps.keys.delete(key.id);
      return `${key.name} (${key.id}) deleted`;
    }),
    {
      name: "keys usage",
      args: `${ID} [--days N] [--json]`,
      summary: "requests and tokens per day, the remaining quota, and the responses the key keeps",
      details: `--days N   how many UTC days, today included (1..${MAX_USAGE_DAYS}, default ${DEFAULT_USAGE_DAYS})
--json     the answer of GET /admin/api/keys/ID/usage?days=N: {"key": {...}, "daily": [...], "storedResponses": {...}},
           days with requests only`,
      options: { days: { type: "string" }, ...JSON_OPTION },
      positionals: true,
      settings: STORE,
      run: ({ values, positionals }) => {
        const raw = values.days as string | undefined;
        if (raw !== undefined && !(/^\d+$/.test(raw.trim()) && Number(raw) >= 1 && Number(raw) <= MAX_USAGE_DAYS)) {
          throw new UsageError(`--days must be a whole number from 1 to ${MAX_USAGE_DAYS}, got '${raw}'`);
        }
        const days = usageDays(raw);
        return withStore(values, async (deps) => {
          const report = await keyUsageReport(deps, await target(deps, positionals), days);
          if (values.json) printJson(report);
          else print(describeUsage(report, days, deps.now()) + "\n");
        });
      },
    },
  ],
};
