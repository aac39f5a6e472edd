/** `gantry serve` and `gantry demo`: run the server (the demo with a simulated upstream and seeded data). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS, checkServerFiles, describeConfig, type Config } from "../config";
import { createDeps, type AppDeps } from "../deps";
import { createLogger } from "../log";
import { startServer, type RunningServer } from "../server";
import { createSimulatedUpstream } from "../gateway/simulator/simulated-upstream";
import { commandHelp, type Command } from "./command";
import { configFrom, parse, type ParsedArgs } from "./common";
import { claimDataDir } from "../store/instance-lock";

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

export const SERVE_HELP = commandHelp(serveEntry);

function waitForSignals(running: RunningServer, deps: AppDeps, onStopped: () => void): Promise<number> {
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
    // SIGHUP re-reads the TLS certificate (certbot and friends renew files in place).
    process.on("SIGHUP", () => void running.reloadTls());
  });
}

function boot(config: Config): { deps: AppDeps; running: RunningServer } {
  // serve has checked these with the other settings; the demo's settings come without the check.
  checkServerFiles(config);
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

async function serve(values: ParsedArgs["values"]): Promise<number> {
  const config = configFrom(values, { checkFiles: true });
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

export async function demoCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {}, false);
  if (values.help) return void process.stdout.write(SERVE_HELP + "\n"), 0;
  const upstream = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: createSimulatedUpstream() });
  const flags = { ...values } as Record<string, unknown>;
  flags["data-dir"] ??= mkdtempSync(join(tmpdir(), "gantry-demo-"));
  flags["upstream-url"] = `http://127.0.0.1:${upstream.port}/v1`;
  flags["upstream-key"] = "demo-upstream-key";
  const config = configFrom(flags);
  const { deps, running } = boot(config);
  const { seedDemo } = await import("./demo-seed");
  const seeded = seedDemo(deps);
  const admin = deps.adminAuth.ensureToken() ?? "(set earlier in this data dir)";
  const base = running.url;
  process.stdout.write(`
Gantry demo is running at ${base}  (simulated upstream model: offline, deterministic)
Data dir: ${config.dataDir}

  API key:      ${seeded.apiKey}
  Admin token:  ${admin}

Try it:
  curl -N ${base}/v1/responses -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\
    -d '{"model":"demo-mini","stream":true,"input":"Hello, Gantry!"}'

  curl ${base}/v1/chat/completions -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\
    -d '{"model":"demo-mini","messages":[{"role":"user","content":"What is the weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}'

  curl ${base}/v1/models -H "Authorization: Bearer ${seeded.apiKey}"

Back office: ${base}/admin (sign in with the admin token)   Key holders: ${base}/portal   API docs: ${base}/docs

Site (client updates, announcements, heartbeats). For the admin lines: export GANTRY_ADMIN_TOKEN=${admin}

${seeded.siteExamples(base)}

Stop with Ctrl-C.
`);
  return waitForSignals(running, deps, () => upstream.stop(true));
}
