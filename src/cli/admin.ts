/** `gantry admin reset-token`: replaces a lost admin token (when it is not set by GANTRY_ADMIN_TOKEN). */
import { UsageError, commandDeps, configFrom, parse, settingsHelp } from "./common";

const HELP = `Usage: gantry admin reset-token [settings]

Replaces the stored admin token with a new one and prints it once. A running server accepts it at once.

Settings:
${settingsHelp()}`;

export async function adminCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, {}, false);
  if (sub !== "reset-token" || values.help) {
    process.stdout.write(HELP + "\n");
    if (sub && sub !== "reset-token") throw new UsageError(`unknown command 'gantry admin ${sub}'`);
    return sub ? 0 : 2;
  }
  const config = configFrom(values);
  if (config.adminToken) throw new UsageError("GANTRY_ADMIN_TOKEN is set: the admin token comes from the settings");
  const deps = commandDeps(config);
  try {
    process.stdout.write(`New admin token (shown once; only its hash is stored):\n  ${deps.adminAuth.rotate()}\n`);
    return 0;
  } finally {
    deps.close();
    deps.db.close();
  }
}
