/** `gantry serve`: run the server (gateway + site + back office) until SIGTERM or SIGINT. */
import { SETTINGS, changedSettings, checkServerFiles, describeConfig, type Config } from "../config";
import { createDeps, type AppDeps } from "../deps";
import { createLogger, printAfterLogs, textLogs } from "../log";
import { routeConsoleToLog } from "../console-to-log";
import { startServer, type RunningServer } from "../server";
import { MAX_HTTP_REQUESTS, MAX_HTTP_REQUESTS_VARIABLE } from "./bun-start-env";
import type { Command } from "./command";
import { CommandError, configFrom, type ParsedArgs } from "./common";
import { DataDirInUseError, lockDataDir } from "../store/sqlite/instance-lock";
import { writeOperatorFile } from "./operator-file";

/** Every setting: the server reads them all. */
export const SERVER_SETTINGS: readonly string[] = SETTINGS.map((s) => s.flag);

export const serveEntry: Command = {
  name: "serve",
  summary: "run the server (gateway + site + back office)",
  details: `Creates the data dir and its database on first start and prints the generated admin token once.
Stops gracefully on SIGTERM or Ctrl-C; SIGHUP re-reads the TLS certificate.`,
  settings: SERVER_SETTINGS,
  run: ({ values }) => serve(values),
};

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

/** This process's lock on the data dir, or a one-line refusal naming the server that holds it. */
function claimDataDir(dataDir: string) {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    throw new CommandError(`${err.message}: stop it first, or give this server a data dir of its own (--data-dir)`);
  }
}

/** Opens the data dir, starts the background services and the listener, and logs where it listens. */
export async function boot(config: Config): Promise<{ deps: AppDeps; running: RunningServer }> {
  // serve has checked these with the other settings; the demo's settings come without the check.
  checkServerFiles(config);
  // The data dir is taken before anything in it is opened: a second server must not even migrate the database.
  const lock = claimDataDir(config.dataDir);
  process.on("exit", () => lock.release());
  const text = textLogs(config.logFormat);
  const log = createLogger(config.logLevel, undefined, text);
  // The drivers' own lines (bun:sql's LISTEN retries) as log lines, not plain text between them.
  routeConsoleToLog(log);
  let deps: AppDeps;
  try {
    deps = await createDeps(config, { log });
  } catch (err) {
    // In the log as well as on stderr: where the log is collected, a start that failed says why there too.
    log.error("cannot start", { error: (err as Error).message });
    throw err;
  }
  deps.releases.start();
  void deps.engagement.start();
  void deps.responsePurge.start();
  const running = startServer(deps, { hostname: config.host, port: config.port });
  // How `gantry upstreams` on this machine reaches this process (its address and a token for this run). A server
  // that cannot write it still serves: only that command cannot reach it.
  try {
    const operator = writeOperatorFile(config.dataDir, running.url);
    deps.adminAuth.allowLocalOperator(operator.token);
    process.on("exit", () => operator.remove());
  } catch (err) {
    log.warn("could not write the operator file: gantry upstreams cannot reach this server", { error: (err as Error).message });
  }
  // A text line stays short: the settings an operator changed. JSON, for collectors, has them all.
  log.info("listening", { url: running.url, settings: text ? changedSettings(config) : describeConfig(config) });
  return { deps, running };
}

async function serve(values: ParsedArgs["values"]): Promise<number> {
  const config = configFrom(values, { checkFiles: true });
  const { deps, running } = await boot(config);
  const token = await deps.adminAuth.ensureToken();
  if (token) {
    printAfterLogs(
      `\nGenerated the admin token (shown once; only its hash is stored):\n  ${token}\n` +
        `Set GANTRY_ADMIN_TOKEN to choose your own, or run 'gantry admin reset-token' to replace it.\n\n`,
    );
  }
  // Set by main.ts re-executing the process; unset only when that was impossible.
  if (!process.env[MAX_HTTP_REQUESTS_VARIABLE]) {
    deps.log.warn(`could not restart with ${MAX_HTTP_REQUESTS_VARIABLE} set: at most 256 upstream streams run at once, later ones wait; set it (e.g. ${MAX_HTTP_REQUESTS}) in the service environment`);
  }
  if (!config.upstreamUrl) deps.log.warn("no upstream configured: set GANTRY_UPSTREAM_URL; the gateway answers 503 until then");
  return waitForSignals(running, deps, () => {});
}
