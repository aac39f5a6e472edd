/** `gantry keys ...`: create, list, show, update, disable, enable, delete, usage — the same rules as /admin/api/keys. */
import { AppError } from "../errors";
import { checkKeyInput, keyFieldsFrom, keyView, type KeyInput } from "../admin/key-input";
import { UsageError, commandDeps, configFrom, parse, printJson, settingsHelp, table } from "./common";

const KEY_OPTIONS = {
  name: { type: "string" },
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
  "reset-usage": { type: "boolean" },
  json: { type: "boolean" },
} as const;

export const KEYS_HELP = `Usage: gantry keys <command> [options]

Commands:
  create --name NAME [limits] [--json]   create a key; its secret is shown once
  list [--json]                          all keys with limits and usage
  show ID|NAME [--json]
  update ID|NAME [limits] [--json]       change limits; "none" clears a limit (unlimited)
  disable ID|NAME | enable ID|NAME | delete ID|NAME
  usage ID|NAME [--json]                 requests and tokens used, remaining quota

Limits (a limit not given is unlimited):
  --rpm N  --rpd N  --concurrency N  --quota-tokens N  --balance AMOUNT  --max-tokens N
  --allow-models a,b | --deny-models a,b | --all-models    exact ids and * globs
  --expires-at ISO8601  --not-before ISO8601  --reset-usage (update only: starts a new quota period)

Settings (every command):
${settingsHelp()}`;

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

function describe(v: ReturnType<typeof keyView>): string {
  const l = v.limits;
  const models = v.modelMode ? `${v.modelMode === "allow" ? "only" : "all but"} ${v.models.join(", ")}` : "all";
  return [
    `id:          ${v.id}`,
    `name:        ${v.name}`,
    `key:         ${v.prefix}… (secret not stored)`,
    `status:      ${v.status}`,
    `valid:       ${v.notBefore ?? "now"} .. ${v.expiresAt ?? "never"}`,
    `models:      ${models}`,
    `limits:      rpm ${l.rpm ?? "-"}, rpd ${l.rpd ?? "-"}, concurrency ${l.concurrency ?? "-"}, max tokens ${l.maxTokens ?? "-"}`,
    `quota:       tokens ${l.quotaTokens ?? "unlimited"}, balance ${l.balance ?? "unlimited"}`,
    `usage:       ${v.usage.requests} requests, ${v.usage.tokens} tokens, spent ${v.usage.spent}`,
    `remaining:   tokens ${v.usage.remainingTokens ?? "unlimited"}, balance ${v.usage.remainingBalance ?? "unlimited"}`,
  ].join("\n");
}

export async function keysCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, KEY_OPTIONS as any) as { values: Values; positionals: string[] };
  if (!sub || values.help) {
    process.stdout.write(KEYS_HELP + "\n");
    return sub ? 0 : 2;
  }
  const deps = commandDeps(configFrom(values));
  try {
    const target = () => {
      const id = positionals[0];
      if (!id) throw new UsageError(`gantry keys ${sub} needs a key id or name`);
      const key = deps.keys.get(id);
      if (!key) throw new AppError("not_found", `no key '${id}'`);
      return key;
    };
    const show = (id: string) => {
      const key = deps.keys.get(id)!;
      const v = keyView(key, deps.keys.usage(key.id));
      if (values.json) printJson(v);
      else process.stdout.write(describe(v) + "\n");
    };
    switch (sub) {
      case "create": {
        const input = keyInputFromFlags(values as Values);
        if (!input.name) throw new UsageError("gantry keys create needs --name NAME");
        if (deps.keys.get(input.name)) throw new UsageError(`a key named '${input.name}' exists already`);
        const { key, secret } = deps.keys.create({ ...keyFieldsFrom(input, null, "cli"), name: input.name });
        const v = keyView(key, deps.keys.usage(key.id));
        if (values.json) printJson({ ...v, key: secret });
        else process.stdout.write(`${describe(v)}\n\nSecret (shown once, store it now):\n  ${secret}\n`);
        return 0;
      }
      case "list": {
        const views = deps.keys.list().map((k) => keyView(k, deps.keys.usage(k.id)));
        if (values.json) printJson(views);
        else if (views.length === 0) process.stdout.write("No keys yet. Create one with: gantry keys create --name NAME\n");
        else {
          const rows = views.map((v) => ({
            id: v.id,
            name: v.name,
            prefix: v.prefix,
            status: v.status,
            rpm: v.limits.rpm,
            rpd: v.limits.rpd,
            conc: v.limits.concurrency,
            tokens: v.usage.tokens,
            remaining: v.usage.remainingTokens ?? v.usage.remainingBalance,
            expires: v.expiresAt,
          }));
          process.stdout.write(table(rows, ["id", "name", "prefix", "status", "rpm", "rpd", "conc", "tokens", "remaining", "expires"]) + "\n");
        }
        return 0;
      }
      case "show":
      case "usage":
        show(target().id);
        return 0;
      case "update": {
        const key = target();
        const input = keyInputFromFlags(values as Values);
        if (input.name && deps.keys.get(input.name) && deps.keys.get(input.name)!.id !== key.id) {
          throw new UsageError(`a key named '${input.name}' exists already`);
        }
        deps.keys.update(key.id, keyFieldsFrom(input, key, "cli"));
        if (input.resetUsage) deps.keys.resetUsage(key.id);
        show(key.id);
        return 0;
      }
      case "disable":
      case "enable": {
        const key = target();
        deps.keys.update(key.id, { status: sub === "disable" ? "disabled" : "active" });
        process.stdout.write(`${key.name} (${key.id}) ${sub}d\n`);
        return 0;
      }
      case "delete": {
        const key = target();
        deps.keys.delete(key.id);
        process.stdout.write(`${key.name} (${key.id}) deleted\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command 'gantry keys ${sub}'`);
    }
  } finally {
    deps.close();
    deps.db.close();
  }
}
