#!/usr/bin/env bun
/** The gantry command: serve | demo | keys | admin | version. */
import { UsageError, runCommand } from "./cli/common";
import { keysCommand } from "./cli/keys";
import { serveCommand } from "./cli/serve";
import { demoCommand } from "./cli/demo";
import { adminCommand } from "./cli/admin";
import { announcementsCommand } from "./cli/announcements";
import { releasesCommand } from "./cli/releases";
import { statsCommand } from "./cli/stats";
import { backupCommand } from "./cli/backup";
import { serviceCommand } from "./cli/service";
import { VERSION_TEXT } from "./version";

const HELP = `gantry — a self-hosted model gateway and client update site in one binary

Usage: gantry <command> [options]

Commands:
  serve            run the server (gateway + site + back office)
  demo             run the server with a simulated upstream and sample data (works offline)
  keys             manage API keys (create, list, show, update, disable, enable, delete, usage)
  releases         publish, sync, list and delete client releases
  announcements    create, list, update, re-show and delete announcements
  stats            client statistics (stats clients)
  backup FILE      consistent online snapshot of the database
  restore FILE     put a snapshot back (refused while a server runs)
  service install  write a hardened systemd unit
  admin            admin token (reset-token)
  version          print version, commit and build date

Every command takes --help.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return runCommand(() => serveCommand(rest));
    case "demo":
      return runCommand(() => demoCommand(rest));
    case "keys":
      return runCommand(() => keysCommand(rest));
    case "releases":
      return runCommand(() => releasesCommand(rest));
    case "announcements":
      return runCommand(() => announcementsCommand(rest));
    case "stats":
      return runCommand(() => statsCommand(rest));
    case "backup":
    case "restore":
      return runCommand(() => backupCommand(rest, command));
    case "service":
      return runCommand(() => serviceCommand(rest));
    case "admin":
      return runCommand(() => adminCommand(rest));
    case "version":
    case "--version":
    case "-v":
      process.stdout.write(VERSION_TEXT + "\n");
      return 0;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(HELP + "\n");
      return command === undefined ? 2 : 0;
    default:
      return runCommand(() => {
        throw new UsageError(`unknown command '${command}'`);
      });
  }
}

const code = await main(process.argv.slice(2));
// Servers resolve only when stopped; one-shot commands end here.
process.exit(code);
