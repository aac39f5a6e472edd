/**
 * The real electron-updater (npm) run as an app would run it, under plain Node with the Electron stand-in
 * (electron-stand-in/, through NODE_PATH): a packaged Linux AppImage app whose resources hold a generic-provider
 * app-update.yml. Given one JSON argument {feedUrl, version, stagingId, dir, download, blankStagingHeader}, it
 * checks for an update (and downloads it when asked) and prints one JSON line with what happened.
 */
"use strict";
const { createHash } = require("node:crypto");
const { mkdirSync, readFileSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const cfg = JSON.parse(process.argv[2]);
  const resources = join(cfg.dir, "resources");
  const userData = join(cfg.dir, "userData");
  mkdirSync(resources, { recursive: true });
  mkdirSync(userData, { recursive: true });
  writeFileSync(join(resources, "app-update.yml"), `provider: generic\nurl: ${cfg.feedUrl}\nupdaterCacheDirName: stand-in-updater\n`);
  writeFileSync(join(userData, ".updaterId"), cfg.stagingId);
  writeFileSync(join(cfg.dir, "StandInApp.AppImage"), "the running version");
  process.resourcesPath = resources;
  process.env.STAND_IN_APP_VERSION = cfg.version;
  process.env.STAND_IN_USER_DATA = userData;
  process.env.APPIMAGE = join(cfg.dir, "StandInApp.AppImage");
  process.env.XDG_CACHE_HOME = join(cfg.dir, "cache");

  const { AppImageUpdater } = require("electron-updater");
  const updater = new AppImageUpdater();
  const log = [];
  updater.logger = { info: (m) => log.push(String(m)), warn: (m) => log.push(String(m)), error: (m) => log.push(String(m)), debug: () => {} };
  updater.autoDownload = false;
  updater.autoInstallOnAppQuit = false;
  updater.disableDifferentialDownload = true;
  // An app may set headers of its own; a blank staging id is a request without one.
  if (cfg.blankStagingHeader) updater.requestHeaders = { "x-user-staging-id": "" };
  const out = {};
  const result = await updater.checkForUpdates();
  out.version = result.updateInfo.version;
  out.isUpdateAvailable = result.isUpdateAvailable;
  out.stagingPercentage = result.updateInfo.stagingPercentage ?? null;
  out.staging = log.find((l) => l.startsWith("Staging percentage")) ?? null;
  if (cfg.download && result.isUpdateAvailable) {
    try {
      const files = await updater.downloadUpdate();
      out.downloaded = files[0];
      out.downloadedSha512 = createHash("sha512").update(readFileSync(files[0])).digest("base64");
    } catch (err) {
      out.downloadError = String(err && err.message ? err.message : err);
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err) }) + "\n");
    process.exit(1);
  },
);
