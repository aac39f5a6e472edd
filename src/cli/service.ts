/** `gantry service install`: writes the systemd unit (and, as root, creates the service user and data dir). */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Group } from "./command";
import { UsageError, type ParsedArgs } from "./common";
import { isCompiled } from "./self-invocation";
import { systemdUnit } from "./systemd-unit";

export const serviceGroup: Group = {
  name: "service",
  summary: "install Gantry as a systemd service (service install)",
  commands: [
    {
      name: "service install",
      args: "[--user gantry] [--data-dir /var/lib/gantry] [--binary PATH] [--env-file /etc/gantry/gantry.env] [--unit-path /etc/systemd/system/gantry.service] [--print]",
      summary: "write a hardened systemd unit that runs 'gantry serve' as a dedicated user",
      details: `The unit restarts the server on failure and stops it gracefully. As root it also creates the system user,
the data dir and an environment file to put the settings in. --print only prints the unit.
Then: systemctl daemon-reload && systemctl enable --now gantry`,
      options: {
        user: { type: "string" },
        "data-dir": { type: "string" },
        binary: { type: "string" },
        "env-file": { type: "string" },
        "unit-path": { type: "string" },
        print: { type: "boolean" },
      },
      settings: [],
      run: ({ values }) => install(values),
    },
  ],
};

/**
 * An absolute path systemd can take: it refuses quotes and backslashes in an executable's name and has no
 * escape for control characters, so such paths are refused here rather than written into a broken unit.
 * (Spaces and `%` are fine: the unit quotes and escapes them.)
 */
function checkedPath(flag: string, value: string): string {
  if (/["'\\\x00-\x1f\x7f]/.test(value)) {
    throw new UsageError(`--${flag} must be a path without quotes, backslashes or control characters (systemd cannot use it), got ${JSON.stringify(value)}`);
  }
  return resolve(value);
}

function install(values: ParsedArgs["values"]): number {
  const user = (values.user as string) ?? "gantry";
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(user)) throw new UsageError(`--user must be a valid user name (lower case letters, digits, _ and -), got '${user}'`);
  const dataDir = checkedPath("data-dir", (values["data-dir"] as string) ?? "/var/lib/gantry");
  // From a source checkout process.execPath is bun itself: `bun serve` is no server, so a binary must be named.
  if (values.binary === undefined && !isCompiled(Bun.main)) {
    throw new UsageError("run from a source checkout there is no gantry binary for the unit: build one (npm run build makes dist/gantry) and pass --binary PATH");
  }
  const binary = checkedPath("binary", (values.binary as string) ?? process.execPath);
  const envFile = checkedPath("env-file", (values["env-file"] as string) ?? "/etc/gantry/gantry.env");
  const unit = systemdUnit({ binary, user, dataDir, envFile });
  if (values.print) {
    process.stdout.write(unit);
    return 0;
  }
  const unitPath = (values["unit-path"] as string) ?? "/etc/systemd/system/gantry.service";
  if (process.getuid?.() === 0) {
    const exists = Bun.spawnSync(["id", "-u", user], { stdout: "ignore", stderr: "ignore" }).success;
    if (!exists) {
      const made = Bun.spawnSync(["useradd", "--system", "--home-dir", dataDir, "--shell", "/usr/sbin/nologin", user]);
      if (!made.success) throw new Error(`could not create user ${user}: ${made.stderr.toString().trim()}`);
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    Bun.spawnSync(["chown", "-R", `${user}:${user}`, dataDir]);
    mkdirSync(dirname(envFile), { recursive: true });
    if (!existsSync(envFile)) writeFileSync(envFile, "# GANTRY_UPSTREAM_URL=https://api.openai.com/v1\n# GANTRY_UPSTREAM_KEY=\n", { mode: 0o600 });
  }
  mkdirSync(dirname(unitPath), { recursive: true });
  writeFileSync(unitPath, unit);
  process.stdout.write(`wrote ${unitPath}\nnext: systemctl daemon-reload && systemctl enable --now gantry\n`);
  return 0;
}
