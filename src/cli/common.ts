/** What every command shares: settings flags, opening the store, printing, and failing with exit code 2. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, SETTINGS, loadConfig, type Config } from "../config";
import { createDeps, type AppDeps } from "../deps";
import { silentLogger } from "../log";
import { AppError } from "../errors";

/** parseArgs options for every setting (`--port`, `--data-dir`, ...), accepted by every command. */
export const SETTING_OPTIONS: NonNullable<ParseArgsConfig["options"]> = Object.fromEntries(
  SETTINGS.map((s) => [s.flag, { type: "string" as const }]),
);

export class UsageError extends Error {}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, allowPositionals = true): ParsedArgs {
  try {
    return parseArgs({ args, options: { ...SETTING_OPTIONS, ...options, help: { type: "boolean", short: "h" } }, allowPositionals, strict: true }) as ParsedArgs;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function configFrom(values: Record<string, unknown>): Config {
  const flags: Record<string, unknown> = {};
  for (const s of SETTINGS) if (values[s.flag] !== undefined) flags[s.flag] = values[s.flag];
  return loadConfig(flags);
}

/** Deps for a one-shot command: same database as the server, quiet, no background timers left running. */
export function commandDeps(config: Config): AppDeps {
  const deps = createDeps(config, { log: silentLogger });
  deps.keyCache.stop();
  return deps;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n");
}

/** Runs a command, turning known failures into a message on stderr and an exit code (2 = bad input). */
export async function runCommand(fn: () => Promise<number | void> | number | void): Promise<number> {
  try {
    return (await fn()) ?? 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gantry: ${err.message}\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`gantry: ${err.message}\nRun with --help for usage.\n`);
      return 2;
    }
    if (err instanceof AppError) {
      process.stderr.write(`gantry: ${err.message}\n`);
      return err.status === 404 ? 1 : 2;
    }
    process.stderr.write(`gantry: ${(err as Error).message}\n`);
    return 1;
  }
}

export function settingsHelp(): string {
  return SETTINGS.map((s) => `  --${s.flag.padEnd(32)} ${s.env.padEnd(38)} ${s.help}`).join("\n");
}
