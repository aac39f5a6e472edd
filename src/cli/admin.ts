/** `gantry admin reset-token`: replaces a lost admin token (when it is not set by GANTRY_ADMIN_TOKEN). */
import type { Group } from "./command";
import { STORE_SETTINGS, UsageError, withStore } from "./common";

export const adminGroup: Group = {
  name: "admin",
  summary: "the admin token (reset-token)",
  commands: [
    {
      name: "admin reset-token",
      summary: "replace the stored admin token with a new one and print it once; a running server accepts it at once",
      details: "Refused when GANTRY_ADMIN_TOKEN (or admin_token in gantry.toml) sets the token: change it there instead.",
      settings: STORE_SETTINGS,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          if (deps.config.adminToken) throw new UsageError("GANTRY_ADMIN_TOKEN is set: the admin token comes from the settings");
          process.stdout.write(`New admin token (shown once; only its hash is stored):\n  ${await deps.adminAuth.rotate()}\n`);
        }),
    },
  ],
};
