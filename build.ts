/**
 * Builds the single executable: `bun run build` -> dist/gantry.
 * Migrations and static assets are imported modules, so they are inside the binary; nothing is read from
 * the checkout at run time. The binary does NOT autoload .env, bunfig.toml, tsconfig.json or package.json
 * from its working directory: a service started from /srv must behave the same as one started from /tmp,
 * and settings come only from flags, GANTRY_* variables and <data dir>/gantry.toml.
 */
import { mkdir } from "node:fs/promises";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: "string" }, // e.g. linux-arm64; default: this machine
    outfile: { type: "string" },
    // Release artifacts: one binary per platform, each with a .sha256 file.
    all: { type: "boolean" },
  },
});

/**
 * Release targets, each with the npm package that carries Bun's runtime for it. Cross-compiling normally makes Bun
 * download that runtime from its own servers; taking it from the npm registry instead works wherever npm does.
 */
const RELEASE_TARGETS: Record<string, { pkg: string; exe: string }> = {
  "linux-x64": { pkg: "@oven/bun-linux-x64", exe: "bin/bun" },
  "linux-arm64": { pkg: "@oven/bun-linux-aarch64", exe: "bin/bun" },
  "darwin-arm64": { pkg: "@oven/bun-darwin-aarch64", exe: "bin/bun" },
  "windows-x64": { pkg: "@oven/bun-windows-x64", exe: "bin/bun.exe" },
};

function git(args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { stderr: "ignore" });
  return r.success ? r.stdout.toString().trim() : "";
}

const commit = process.env.GANTRY_COMMIT || git(["rev-parse", "--short=12", "HEAD"]) || "unknown";
const buildDate = new Date().toISOString();
const bunVersion = Bun.version;

/** The Bun runtime for a target, unpacked from its npm package into dist/.runtimes (cached). */
async function runtimeFor(target: string): Promise<string> {
  const spec = RELEASE_TARGETS[target];
  if (!spec) throw new Error(`unknown target ${target}; known: ${Object.keys(RELEASE_TARGETS).join(", ")}`);
  const dir = `dist/.runtimes/${target}-${bunVersion}`;
  const exe = `${dir}/package/${spec.exe}`;
  if (await Bun.file(exe).exists()) return exe;
  await mkdir(dir, { recursive: true });
  const pack = Bun.spawnSync(["npm", "pack", `${spec.pkg}@${bunVersion}`, "--pack-destination", dir], { stderr: "pipe" });
  if (!pack.success) throw new Error(`npm pack ${spec.pkg}@${bunVersion} failed: ${pack.stderr.toString()}`);
  const tgz = pack.stdout.toString().trim().split("\n").pop()!;
  const untar = Bun.spawnSync(["tar", "xzf", `${dir}/${tgz}`, "-C", dir]);
  if (!untar.success) throw new Error(`could not unpack ${tgz}`);
  return exe;
}

async function compile(outfile: string, target?: string): Promise<void> {
  const executablePath = target ? await runtimeFor(target) : undefined;
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
      ...(target ? { target: `bun-${target}` as any, executablePath } : {}),
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
}

async function writeChecksum(file: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  const hex = hasher.digest("hex");
  await Bun.write(`${file}.sha256`, `${hex}  ${basename(file)}\n`);
  return hex;
}

if (values.all) {
  for (const target of Object.keys(RELEASE_TARGETS)) {
    const outfile = `dist/release/gantry-${pkg.version}-${target}${target.startsWith("windows") ? ".exe" : ""}`;
    await compile(outfile, target);
    console.log(`built ${outfile}  sha256 ${await writeChecksum(outfile)}`);
  }
} else {
  const outfile = values.outfile ?? `dist/gantry${values.target ? "-" + values.target : ""}`;
  await compile(outfile, values.target);
  console.log(`built ${outfile} (gantry ${pkg.version}, commit ${commit}, ${buildDate})`);
}
