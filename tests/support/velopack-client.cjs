/**
 * The real Velopack client (npm velopack, its native part) run as an installed Linux app would run it: an app
 * directory with its manifest (sq.version) handed to the UpdateManager as its locator. Given one JSON argument
 * {feedUrl, version, dir, download}, it checks the feed (and downloads the update when asked) and prints one JSON
 * line with what happened.
 */
"use strict";
const { mkdirSync, readdirSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const { UpdateManager, setVelopackLogger } = require("velopack");

async function main() {
  const cfg = JSON.parse(process.argv[2]);
  const app = join(cfg.dir, "app");
  mkdirSync(join(app, "packages"), { recursive: true });
  mkdirSync(join(app, "current"), { recursive: true });
  writeFileSync(
    join(app, "sq.version"),
    `<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://schemas.microsoft.com/packaging/2010/07/nuspec.xsd"><metadata><id>MyApp</id><title>MyApp</title><version>${cfg.version}</version><authors>Gantry tests</authors><description>MyApp</description><channel>linux</channel><mainExe>MyApp</mainExe></metadata></package>`,
  );
  writeFileSync(join(app, "UpdateNix"), "");
  const log = [];
  setVelopackLogger((level, msg) => log.push(`${level} ${msg}`));
  const manager = new UpdateManager(cfg.feedUrl, undefined, {
    RootAppDir: app,
    UpdateExePath: join(app, "UpdateNix"),
    PackagesDir: join(app, "packages"),
    ManifestPath: join(app, "sq.version"),
    CurrentBinaryDir: join(app, "current"),
    IsPortable: true,
  });
  const out = { requested: log.find((l) => l.includes("Downloading releases")) ?? null };
  const update = await manager.checkForUpdatesAsync();
  out.requested = log.find((l) => l.includes("Downloading releases for channel")) ?? null;
  out.target = update ? update.TargetFullRelease : null;
  if (update && cfg.download) {
    try {
      await manager.downloadUpdateAsync(update);
      out.packages = readdirSync(join(app, "packages")).filter((n) => n.endsWith(".nupkg"));
    } catch (err) {
      out.downloadError = String(err && err.message ? err.message : err);
      out.log = log.filter((l) => !l.startsWith("debug")).slice(-5);
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
