/**
 * The command table. Every command declares its usage, its options and the settings it reads; command groups
 * (`keys`, `releases`, ...) hold commands. One dispatcher turns that into:
 * - help at every level (`--help`, `-h`, `help`), printed before anything else happens, so it never reads
 *   or creates a data directory;
 * - parsing that accepts exactly the declared options and settings, with wrong usage reported as one line;
 * - the run, with failures printed as `gantry <command>: <what went wrong>`.
 */
import { SETTINGS } from "../config";
import { UsageError, parse, runCommand, type Options, type ParsedArgs } from "./common";

export interface Command {
  /** The words after `gantry`: "keys create", "backup". */
  name: string;
  /** What follows the name on the usage line, e.g. "--name NAME [limits] [--json]". */
  args?: string;
  /** One line, lower case: what it does (shown in lists; the command's own help makes it a sentence). */
  summary: string;
  /** More help: options and rules, already laid out. */
  details?: string;
  options?: Options;
  /** Whether it takes positional arguments (ids, names, files). */
  positionals?: boolean;
  /** The settings it reads, by flag name: listed in its help and accepted on its command line. */
  settings: readonly string[];
  run(parsed: ParsedArgs, args: string[]): Promise<number | void> | number | void;
}

export interface Group {
  name: string;
  summary: string;
  commands: Command[];
  /** Notes shared by its commands (e.g. the limits every key command takes). */
  details?: string;
}

export type Entry = Command | Group;

const isGroup = (e: Entry): e is Group => "commands" in e;

/**
 * Help is asked for by --help or -h anywhere before `--`, or by `help` as the first argument (so a key or
 * file named "help" is given by its id or as ./help).
 */
export function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  const head = end < 0 ? args : args.slice(0, end);
  return head.includes("--help") || head.includes("-h") || args[0] === "help";
}

function sentence(text: string): string {
  const s = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/** Two columns; a left cell too long to share its line puts its description on the next one, under the others. */
function columns(rows: Array<[string, string]>, indent = "  ", maxLeft = 40): string {
  const width = Math.max(0, ...rows.map(([a]) => a.length).filter((n) => n <= maxLeft));
  const pad = " ".repeat(indent.length + width + 3);
  return rows
    .map(([a, b]) => (a.length <= maxLeft ? `${indent}${a.padEnd(width)}   ${b}` : `${indent}${a}\n${pad}${b}`).trimEnd())
    .join("\n");
}

/** The given settings as help lines: flag, environment variable, meaning and default. */
export function settingsHelp(flags: readonly string[]): string {
  const defs = SETTINGS.filter((s) => flags.includes(s.flag));
  const flagWidth = Math.max(...defs.map((s) => s.flag.length + 2));
  const rows = defs.map((s): [string, string] => {
    const hidden = s.secret || s.default === "" || (Array.isArray(s.default) && s.default.length === 0);
    const shown = hidden ? "" : ` (default: ${typeof s.default === "string" ? s.default : JSON.stringify(s.default)})`;
    return [`${`--${s.flag}`.padEnd(flagWidth)}  ${s.env}`, `${s.help}${shown}`];
  });
  return columns(rows, "  ", 80);
}

const SETTINGS_TITLE = "Settings (flag, else environment, else <data dir>/gantry.toml, else default)";

export function commandHelp(c: Command): string {
  const parts = [`Usage: gantry ${c.name}${c.args ? ` ${c.args}` : ""}${c.settings.length ? " [settings]" : ""}`, sentence(c.summary)];
  if (c.details) parts.push(c.details);
  if (c.settings.length) parts.push(`${SETTINGS_TITLE}:\n${settingsHelp(c.settings)}`);
  return parts.join("\n\n");
}

export function groupHelp(g: Group): string {
  const list = columns(g.commands.map((c): [string, string] => [`${c.name.slice(g.name.length + 1)}${c.args ? ` ${c.args}` : ""}`, c.summary]));
  const parts = [`Usage: gantry ${g.name} <command> [options]`, sentence(g.summary), `Commands:\n${list}`];
  if (g.details) parts.push(g.details);
  const shared = g.commands.slice(1).reduce<readonly string[]>((acc, c) => acc.filter((f) => c.settings.includes(f)), g.commands[0].settings);
  if (shared.length) parts.push(`${SETTINGS_TITLE}, every command:\n${settingsHelp(shared)}`);
  parts.push(`'gantry ${g.name} <command> --help' shows a command's options and settings.`);
  return parts.join("\n\n");
}

/** The top-level help: every entry of the table with its summary. */
export function topHelp(entries: Entry[], intro: string, outro: string): string {
  const rows = entries.map((e): [string, string] => [isGroup(e) ? e.name : `${e.name}${e.args ? ` ${e.args}` : ""}`, e.summary]);
  return `${intro}\n\nCommands:\n${columns(rows)}\n\n${outro}`;
}

function print(text: string): number {
  process.stdout.write(text + "\n");
  return 0;
}

/** The entry named by `words` (["keys", "create"]), for `gantry help keys create`. */
export function findEntry(entries: Entry[], words: string[]): Entry | undefined {
  const top = entries.find((e) => e.name === words[0]);
  if (!top || words.length === 1) return top;
  if (!isGroup(top) || words.length > 2) return undefined;
  return top.commands.find((c) => c.name === `${top.name} ${words[1]}`);
}

export function helpOf(entry: Entry): string {
  return isGroup(entry) ? groupHelp(entry) : commandHelp(entry);
}

/** Runs a group or a command with the arguments that follow its name; returns the exit code. */
export function runEntry(entry: Entry, args: string[]): Promise<number> {
  if (!isGroup(entry)) return runLeaf(entry, args);
  const [sub, ...rest] = args;
  if (sub === undefined) {
    // A group alone is an incomplete command: show what it offers, and say it was incomplete.
    process.stdout.write(groupHelp(entry) + "\n");
    return Promise.resolve(2);
  }
  if (sub === "help" || (sub.startsWith("-") && asksForHelp(args))) {
    return runCommand(entry.name, () => {
      // `gantry keys help create`, `gantry keys --help create`: the word after the help word names a command.
      const named = ["help", "--help", "-h"].includes(sub) && rest.length > 0 && !rest[0].startsWith("-");
      if (!named) return print(groupHelp(entry));
      const c = entry.commands.find((x) => x.name === `${entry.name} ${rest[0]}`);
      if (!c) throw new UsageError(`unknown command '${rest[0]}'`);
      return print(commandHelp(c));
    });
  }
  const command = entry.commands.find((c) => c.name === `${entry.name} ${sub}`);
  if (!command) {
    return runCommand(entry.name, () => {
      throw new UsageError(sub.startsWith("-") ? `a command comes first, before options like ${sub}` : `unknown command '${sub}'`);
    });
  }
  return runLeaf(command, rest);
}

function runLeaf(c: Command, args: string[]): Promise<number> {
  return runCommand(c.name, () => {
    if (asksForHelp(args)) return print(commandHelp(c));
    const parsed = parse(args, c.options ?? {}, c.positionals ?? false, c.settings);
    return c.run(parsed, args);
  }, [...Object.keys(c.options ?? {}), ...(c.settings ?? [])]);
}
