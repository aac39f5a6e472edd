/** What every command shares: reading its settings, opening the store, printing, and failing with one clear line. */
import { escapeControls, escapeJsonControls } from "../rules/control-chars";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, SETTINGS, loadConfig, type Config, type LoadOptions } from "../config";
import { createDeps, databasePathOf, type AppDeps } from "../deps";
import { InProcessLimiter } from "../gateway/limits/limiter";
import { silentLogger } from "../log";
import { AppError } from "../errors";
import { DatabaseMissingError } from "../store/sqlite/db";

export type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * The settings of a command that works on the stored data (keys, releases, announcements, stats, ...): where the
 * records are and where the asset bytes are, so every command works on the same data as the servers.
 */
export const STORE_SETTINGS: readonly string[] = ["data-dir", "database-url", "s3-bucket", "s3-endpoint", "s3-region", "s3-access-key-id", "s3-secret-access-key"];

/** parseArgs options for the given settings (`--port`, `--data-dir`, ...), by flag name; every setting when none given. */
export function settingOptions(flags: readonly string[] = SETTINGS.map((s) => s.flag)): Options {
  return Object.fromEntries(flags.map((flag) => [flag, { type: "string" as const }]));
}

/** Wrong usage: printed as one line with a pointer to the command's help, exit code 2. */
export class UsageError extends Error {}

/** The command was understood but what it needs is not there (no database in the data dir): exit code 1. */
export class CommandError extends Error {}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** parseArgs' error, in one short sentence of ours (its own text suggests `--` tricks and spans three lines). */
export function describeParseError(err: unknown, known: Options): string {
  const e = err as { code?: string; message?: string };
  const quoted = /'([^']+)'/.exec(e.message ?? "")?.[1] ?? "";
  const option = quoted.split(" ")[0];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      if (SETTINGS.some((s) => `--${s.flag}` === option)) return `${option} is a setting this command does not use`;
      const name = option.replace(/^-+/, "");
      const near = Object.keys(known).filter((k) => name.length > 0 && k.startsWith(name));
      return near.length === 1 ? `unknown option ${option}; did you mean --${near[0]}?` : `unknown option ${option}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (/does not take an argument/.test(e.message ?? "")) return `${option} takes no value`;
      if (/ambiguous/.test(e.message ?? "")) return `${option} needs a value (for a value that starts with '-', write ${option}=VALUE)`;
      return `${option} needs a value`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument '${quoted}'`;
    default:
      return (e.message ?? String(err)).split("\n")[0];
  }
}

/** Parses a command line: the given options, the settings (every one unless `settings` names some), and --help. */
export function parse(args: string[], options: Options, allowPositionals = true, settings?: readonly string[]): ParsedArgs {
  const all: Options = { ...settingOptions(settings), ...options, help: { type: "boolean", short: "h" } };
  try {
    return parseArgs({ args, options: all, allowPositionals, strict: true }) as ParsedArgs;
  } catch (err) {
    throw new UsageError(describeParseError(err, all));
  }
}

/** The settings, from the flags among `values` (then the environment, gantry.toml, defaults). */
export function configFrom(values: Record<string, unknown>, options: LoadOptions = {}): Config {
  const flags: Record<string, unknown> = {};
  for (const s of SETTINGS) if (values[s.flag] !== undefined) flags[s.flag] = values[s.flag];
  return loadConfig(flags, process.env, options);
}

/**
 * Deps for a one-shot command: the server's database, quiet, no background timers left running.
 * Only commands that add content (`creates`) may create the database, and they say so: a mistyped or forgotten
 * --data-dir must not pass unnoticed. The others refuse: a new, empty database is never what they meant.
 */
export async function commandDeps(config: Config, creates = false): Promise<AppDeps> {
  const path = databasePathOf(config);
  const isNew = creates && !config.databaseUrl && !existsSync(path);
  let deps: AppDeps;
  try {
    // No command admits gateway calls: with Redis, one would only join the registry of serving instances (for
    // a lease after it exits), which fail-open shares and the wait after an empty Redis count.
    deps = await createDeps(config, { log: silentLogger, existingDatabaseOnly: !creates, checkMirror: false, limiter: new InProcessLimiter() });
  } catch (err) {
    if (err instanceof DatabaseMissingError) throw noDatabase(config.dataDir);
    throw err;
  }
  deps.keyCache.stop();
  if (isNew) process.stderr.write(`gantry: there was no database in ${resolve(config.dataDir)}: created a new one (the server must use this data dir)\n`);
  return deps;
}

export function noDatabase(dataDir: string): CommandError {
  return new CommandError(`no Gantry database in ${resolve(dataDir)}; start the server once (gantry serve) or pass --data-dir`);
}

/**
 * Runs `fn` with the store of the settings in `values`, and closes it afterwards. `creates`: the command adds
 * content (a key, a release, an announcement), so it may be run before the server's first start.
 */
export async function withStore<T>(values: Record<string, unknown>, fn: (deps: AppDeps) => T | Promise<T>, creates = false): Promise<T> {
  const deps = await commandDeps(configFrom(values), creates);
  try {
    return await fn(deps);
  } finally {
    await deps.close();
  }
}

/**
 * Text for the terminal, which may hold stored data (names, titles, remote error messages): control characters
 * are written as escapes (`\x1b`), so nothing stored can move the cursor, recolour, retitle or clear a terminal.
 * Line breaks and tabs of the text itself stay. Every command prints through this, printJson or table.
 */
export function print(text: string): void {
  process.stdout.write(escapeControls(text, true));
}

/** JSON.stringify escapes C0 controls itself; DEL, C1 and bidirectional controls become \u escapes (same value). */
export function printJson(value: unknown): void {
  process.stdout.write(escapeJsonControls(JSON.stringify(value, null, 2)) + "\n");
}

export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  // A cell is one line: any control character in it, line breaks included, is escaped.
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : escapeControls(String(v)));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n");
}

/**
 * Every CLI message has one style: `gantry <command>: <lower-case clause>`. Messages written as sentences for
 * the HTTP API ("No key 'x'.") are brought to it here rather than rewritten twice.
 */
export function asClause(message: string): string {
  const m = message.trim().replace(/\.$/, "");
  // A message that starts by naming a part ("PostgreSQL at db:5432: …", "Redis at …") keeps its name as spelt.
  if (/^(PostgreSQL|Redis)\b/.test(m)) return m;
  return /^[A-Z][a-z]/.test(m) ? m[0].toLowerCase() + m.slice(1) : m;
}

const kebab = (field: string) => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * A message of the rules shared with the admin API in the words of the command line: each quoted JSON field name
 * that is one of the command's flags becomes that flag ('expiresAt' -> --expires-at; 'locales.zh-CN.title' ->
 * --locale-text zh-CN.title). Quoted values that name no flag are left alone.
 */
export function inFlagWords(message: string, flags: readonly string[]): string {
  if (flags.length === 0) return message;
  return message
    .replace(/'locales\.([^.'\s]+)\.([A-Za-z]+)'/g, (all, tag: string, field: string) => (flags.includes("locale-text") ? `--locale-text ${tag}.${kebab(field)}` : all))
    .replace(/'([a-z][A-Za-z0-9]*)'/g, (all, field: string) => (flags.includes(kebab(field)) ? `--${kebab(field)}` : all));
}

/**
 * Runs a command, turning known failures into a message on stderr and an exit code: 2 for wrong usage and
 * invalid settings, 1 for anything else (a key or release that does not exist, no database, a failed sync).
 */
export async function runCommand(name: string, fn: () => Promise<number | void> | number | void, flags: readonly string[] = []): Promise<number> {
  // A message may quote what was typed or stored (a key name): its control characters are escaped too. The rules
  // shared with the admin API name JSON fields ('expiresAt'); the user typed flags (--expires-at).
  const say = (text: string) => process.stderr.write(`gantry${name ? ` ${name}` : ""}: ${escapeControls(inFlagWords(text, flags), true)}\n`);
  try {
    return (await fn()) ?? 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      say(err.message);
      return 2;
    }
    if (err instanceof UsageError) {
      say(`${asClause(err.message)} (see gantry${name ? ` ${name}` : ""} --help)`);
      return 2;
    }
    if (err instanceof AppError) {
      say(asClause(err.message));
      return err.status === 404 ? 1 : 2;
    }
    say(asClause((err as Error).message));
    return 1;
  }
}
