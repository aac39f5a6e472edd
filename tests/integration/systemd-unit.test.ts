/**
 * The unit `gantry service install` writes passes `systemd-analyze verify` without a warning, also for paths
 * with spaces and `%`; paths systemd cannot take are refused. The verify checks skip, with a message, where
 * systemd-analyze is not installed (apt-get install systemd).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemdUnit, unitWord } from "../../src/cli/systemd-unit";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const ANALYZE = Bun.which("systemd-analyze");
if (!ANALYZE) console.warn("systemd unit verification skipped: systemd-analyze is not installed (apt-get install systemd)");

const cli = (args: string[]) => Bun.spawnSync([BUN, "src/main.ts", "service", "install", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });

let dir: string;
/** A real executable to name in ExecStart: verify checks that it exists. */
let binary: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gantry-unit-"));
  mkdirSync(join(dir, "my apps"));
  binary = join(dir, "my apps", "gantry 100%");
  copyFileSync("/bin/true", binary);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every line systemd-analyze prints about our unit (other units of the host may have their own complaints). */
function verify(unit: string, name: string): string[] {
  const path = join(dir, name);
  writeFileSync(path, unit);
  const r = Bun.spawnSync([ANALYZE!, "verify", path], { stdout: "pipe", stderr: "pipe" });
  const lines = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes(path) || l.includes(name));
  return r.exitCode === 0 ? lines : [`exit ${r.exitCode}`, ...lines];
}

describe.skipIf(!ANALYZE)("systemd-analyze verify", () => {
  test("the printed unit, with the default paths, has no warning", () => {
    const r = cli(["--print", "--binary", "/bin/true"]);
    expect(r.exitCode).toBe(0);
    expect(verify(r.stdout.toString(), "gantry.service")).toEqual([]);
  });

  test("paths with spaces and % (quoted and escaped) have none either", () => {
    const r = cli(["--print", "--binary", binary, "--data-dir", "/var/lib/gantry data/50%", "--env-file", "/etc/gantry x/%h.env", "--user", "svc"]);
    expect(r.exitCode).toBe(0);
    const unit = r.stdout.toString();
    expect(unit).toContain(`ExecStart="${binary.replace("%", "%%")}" serve`);
    expect(verify(unit, "gantry-spaces.service")).toEqual([]);
  });

  test("the check itself catches a bad unit (what the old Documentation= line did)", () => {
    const bad = systemdUnit({ binary: "/bin/true", user: "gantry", dataDir: "/var/lib/gantry", envFile: "/etc/gantry/gantry.env" }).replace(
      "[Unit]\n",
      "[Unit]\nDocumentation=gantry --help\n",
    );
    expect(verify(bad, "gantry-bad.service").join("\n")).toContain("Invalid URL");
  });
});

describe("paths in the unit", () => {
  test("unitWord doubles % and quotes words with spaces, quotes or backslashes", () => {
    expect(unitWord("/var/lib/gantry")).toBe("/var/lib/gantry");
    expect(unitWord("/srv/50%")).toBe("/srv/50%%");
    expect(unitWord("/srv/my data")).toBe('"/srv/my data"');
    expect(unitWord('/srv/a"b\\c d')).toBe('"/srv/a\\"b\\\\c d"');
  });

  test("a path systemd cannot take is refused with a clear message (exit 2)", () => {
    const r = cli(["--print", "--binary", '/opt/a"b']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.toString()).toContain("--binary must be a path without quotes");
  });

  test("a relative --env-file becomes absolute (systemd ignores a relative one)", () => {
    const r = cli(["--print", "--binary", "/bin/true", "--env-file", "conf/gantry.env"]);
    expect(r.stdout.toString()).toContain(`EnvironmentFile=-${join(ROOT, "conf", "gantry.env")}`);
  });

  test("from a source checkout, --binary is required (bun itself is no gantry binary)", () => {
    const r = cli(["--print"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.toString()).toContain("--binary");
    expect(r.stdout.toString()).not.toContain("ExecStart=");
  });
});
