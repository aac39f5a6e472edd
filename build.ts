/**
 * Builds the single executable: `bun run build` -> dist/gantry.
 * Migrations and static assets are imported modules, so they are inside the binary; nothing is read from
 * the checkout at run time. The binary does NOT autoload .env, bunfig.toml, tsconfig.json or package.json
 * from its working directory: a service started from /srv must behave the same as one started from /tmp,
 * and settings come only from flags, GANTRY_* variables and <data dir>/gantry.toml.
 */
import { parseArgs } from "node:util";
import pkg from "./package.json";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: "string" }, // e.g. bun-linux-arm64; default: this machine
    outfile: { type: "string" },
  },
});

function git(args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { stderr: "ignore" });
  return r.success ? r.stdout.toString().trim() : "";
}

const commit = process.env.GANTRY_COMMIT || git(["rev-parse", "--short=12", "HEAD"]) || "unknown";
const buildDate = new Date().toISOString();
const outfile = values.outfile ?? `dist/gantry${values.target ? "-" + values.target.replace(/^bun-/, "") : ""}`;

const result = await Bun.build({
  entrypoints: ["./src/main.ts"],
  // Identifiers kept: a stack trace in a log should name real functions.
  minify: { whitespace: true, syntax: true, identifiers: false },
  sourcemap: "none",
  define: {
    GANTRY_VERSION: JSON.stringify(pkg.version),
    GANTRY_COMMIT: JSON.stringify(commit),
    GANTRY_BUILD_DATE: JSON.stringify(buildDate),
  },
  compile: {
    outfile,
    ...(values.target ? { target: values.target as any } : {}),
    autoloadDotenv: false,
    autoloadBunfig: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  },
});

if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile} (gantry ${pkg.version}, commit ${commit}, ${buildDate})`);
