/** `gantry serve`: run the server (gateway + site + back office) until SIGTERM or SIGINT. */
import { describeConfig, type Config } from "../config";
import { createDeps, type AppDeps } from "../deps";
import { createLogger } from "../log";
import { startServer, type RunningServer } from "../server";
import { configFrom, parse, settingsHelp } from "./common";
import { claimDataDir } from "../store/instance-lock";

export const SERVE_HELP = `Usage: gantry serve [settings]

Settings (flag > environment > <data dir>/gantry.toml > default):
${settingsHelp()}`;

export interface SignalOptions {
  /**
   * SIGHUP stops instead of re-reading the TLS certificate: for the demo, whose terminal closing should end it
   * (and remove its temporary data) rather than leave it running unseen.
   */
  stopOnHangup?: boolean;
}

/** Resolves with the exit code once a stop signal has been handled: server stopped, writes flushed, database closed. */
export function waitForSignals(running: RunningServer, deps: AppDeps, onStopped: () => void, options: SignalOptions = {}): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      deps.log.info("stopping", { signal, graceSeconds: deps.config.shutdownGraceSeconds });
      await running.stop();
      // The request log line of a reply sent just before the signal is written by an after-response hook that
      // runs on the next turn of the event loop: let it run before the process exits.
      await new Promise((resolve) => setImmediate(resolve));
      onStopped();
      deps.db.close();
      deps.log.info("stopped");
      resolve(0);
    };
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGINT", () => void stop("SIGINT"));
    if (options.stopOnHangup) process.on("SIGHUP", () => void stop("SIGHUP"));
    // SIGHUP re-reads the TLS certificate (certbot and friends renew files in place).
    else process.on("SIGHUP", () => void running.reloadTls());
  });
}

/** Opens the data dir, starts the background services and the listener, and logs where it listens. */
export function boot(config: Config): { deps: AppDeps; running: RunningServer } {
  const log = createLogger(config.logLevel);
  const deps = createDeps(config, { log });
  const unclaim = claimDataDir(config.dataDir);
  process.on("exit", unclaim);
  deps.releases.start();
  deps.engagement.start();
  const running = startServer(deps, { hostname: config.host, port: config.port });
  log.info("listening", { url: running.url, settings: describeConfig(config) });
  return { deps, running };
}

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {}, false);
  if (values.help) return void process.stdout.write(SERVE_HELP + "\n"), 0;
  const config = configFrom(values);
  const { deps, running } = boot(config);
  const token = deps.adminAuth.ensureToken();
  if (token) {
    process.stdout.write(
      `\nGenerated the admin token (shown once; only its hash is stored):\n  ${token}\n` +
        `Set GANTRY_ADMIN_TOKEN to choose your own, or run 'gantry admin reset-token' to replace it.\n\n`,
    );
  }
  if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
    deps.log.warn("BUN_CONFIG_MAX_HTTP_REQUESTS is not set: at most 256 upstream streams run at once, later ones wait; set it (e.g. 4096) in the service environment");
  }
  if (!config.upstreamUrl) deps.log.warn("no upstream configured: set GANTRY_UPSTREAM_URL; the gateway answers 503 until then");
  return waitForSignals(running, deps, () => {});
}
