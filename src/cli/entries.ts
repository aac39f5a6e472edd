/** Every command of the gantry CLI, in the order `gantry --help` lists them (see command.ts for what an entry is). */
import type { Entry } from "./command";
import { keysGroup } from "./keys";
import { serveEntry } from "./serve";
import { demoEntry } from "./demo";
import { adminGroup } from "./admin";
import { announcementsGroup } from "./announcements";
import { releasesGroup } from "./releases";
import { statsGroup } from "./stats";
import { upstreamsGroup } from "./upstreams";
import { backupCommand, restoreCommand } from "./backup";
import { serviceGroup } from "./service";
import { storeGroup } from "./store";
import { VERSION_TEXT } from "../version";

export const versionEntry: Entry = {
  name: "version",
  summary: "print version, commit and build date",
  settings: [],
  run: () => void process.stdout.write(VERSION_TEXT + "\n"),
};

export const ENTRIES: Entry[] = [
  serveEntry,
  demoEntry,
  keysGroup,
  releasesGroup,
  announcementsGroup,
  statsGroup,
  upstreamsGroup,
  backupCommand,
  restoreCommand,
  storeGroup,
  serviceGroup,
  adminGroup,
  versionEntry,
];
