#!/usr/bin/env bun
/** The gantry command: the table of commands, and the dispatch to them (src/cli/command.ts). */
// First, before the other modules load: a server command may re-execute itself with settings Bun reads at start.
import "./cli/start-env";
import { findEntry, helpOf, runEntry, topHelp } from "./cli/command";
import { UsageError, runCommand } from "./cli/common";
import { ENTRIES, versionEntry } from "./cli/entries";

const HELP = topHelp(
  ENTRIES,
  `gantry — a self-hosted model gateway and client update site in one binary

Usage: gantry <command> [options]`,
  `'gantry <command> --help' (or 'gantry help <command>') shows a command's options and the settings it reads.`,
);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stdout.write(HELP + "\n");
    return 2;
  }
  if (command === "help" || command === "--help" || command === "-h") {
    // Words name the command (`gantry help keys create`); options after them (--data-dir ...) do not matter here.
    const firstOption = rest.findIndex((w) => w.startsWith("-"));
    const words = firstOption < 0 ? rest : rest.slice(0, firstOption);
    if (words.length === 0) return void process.stdout.write(HELP + "\n"), 0;
    const entry = findEntry(ENTRIES, words);
    if (entry) return void process.stdout.write(helpOf(entry) + "\n"), 0;
    return runCommand("", () => {
      throw new UsageError(`unknown command '${words.join(" ")}'`);
    });
  }
  if (command === "--version" || command === "-v") return runEntry(versionEntry, rest);
  const entry = ENTRIES.find((e) => e.name === command);
  if (entry) return runEntry(entry, rest);
  return runCommand("", () => {
    throw new UsageError(`unknown command '${command}'`);
  });
}

const code = await main(process.argv.slice(2));
// Servers resolve only when stopped; one-shot commands end here.
process.exit(code);
