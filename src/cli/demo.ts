/**
 * `gantry demo`: the server with a simulated upstream model (offline, deterministic) and sample data, so a
 * newcomer can try every part at once. Without --data-dir the data lives in a new temporary directory that is
 * removed when the demo stops (Ctrl-C, SIGTERM, the terminal closing, or any other exit it gets to see);
 * with --data-dir it is kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSimulatedUpstream } from "../gateway/simulator/simulated-upstream";
import { printAfterLogs } from "../log";
import type { Command } from "./command";
import { configFrom, type ParsedArgs } from "./common";
import { seedDemo, type DemoSeed } from "./demo-seed";
import { SERVER_SETTINGS, boot, waitForSignals } from "./serve";
import { selfInvocation, shellWord, type Invocation } from "./self-invocation";

export const demoEntry: Command = {
  name: "demo",
  summary: "run the server with a simulated upstream and sample data (works offline)",
  details: `The upstream is a built-in simulated model (offline, deterministic); the sample data is an API key,
releases, announcements, clients and gateway traffic. Without --data-dir the data goes to a new temporary
directory that is removed when the demo stops; with --data-dir it is kept (and the next run reuses it).`,
  // The demo sets the upstream itself.
  settings: SERVER_SETTINGS.filter((f) => f !== "upstream-url" && f !== "upstream-key" && f !== "upstreams"),
  run: ({ values }) => demo(values),
};

/** A new temporary data dir, removed by `remove()` or, failing that, when the process exits. */
function temporaryDataDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "gantry-demo-"));
  const remove = () => rmSync(path, { recursive: true, force: true });
  process.on("exit", remove);
  return { path, remove };
}

/** The lines that show how to run CLI commands against this demo's data while it runs. */
export function cliHints(dataDir: string, invocation: Invocation): string {
  const dir = shellWord(dataDir);
  const where = invocation.cwd ? `from another terminal, in ${invocation.cwd}` : "from another terminal";
  return [
    `Command line, against this demo's data (${where}):`,
    ...["keys list", "keys usage demo", "stats clients", "announcements list", "releases list"].map(
      (command) => `  ${invocation.prefix} ${command} --data-dir ${dir}`,
    ),
  ].join("\n");
}

/** The admin token line and the line that sets it for the curl examples: a new token is shown once. */
function adminTokenLines(generated: string | null, configured: boolean, dataDir: string, invocation: Invocation) {
  if (generated) {
    return { shown: generated, forCurl: `For the admin lines: export GANTRY_ADMIN_TOKEN=${generated}` };
  }
  const shown = configured
    ? "the one you set (GANTRY_ADMIN_TOKEN or --admin-token)"
    : `made by an earlier run in this data dir (only its hash is kept); for a new one: ${invocation.prefix} admin reset-token --data-dir ${shellWord(dataDir)}`;
  return { shown, forCurl: "For the admin lines: export GANTRY_ADMIN_TOKEN=<admin token>" };
}

const DEMO_ALIASES = { "claude-*": "demo-mini" };
const DEMO_ALIAS_ENV = `GANTRY_MODEL_ALIASES='${JSON.stringify(DEMO_ALIASES)}'`;

function printout(
  base: string,
  dataDir: string,
  temporary: boolean,
  admin: { shown: string; forCurl: string },
  seeded: DemoSeed,
  invocation: Invocation,
): string {
  const keep = temporary
    ? `temporary: removed when the demo stops (to keep the data: ${invocation.prefix} demo --data-dir DIR)`
    : "kept when the demo stops";
  return `
Gantry demo is running at ${base}  (simulated upstream model: offline, deterministic)

  Start here:   ${base}/   (links to the back office, the key portal and the API docs)
  API key:      ${seeded.apiKey}
  Admin token:  ${admin.shown}
                (sign in to ${base}/admin with it)
  Data dir:     ${dataDir}
                ${keep}

Try the gateway:
  curl -N ${base}/v1/responses -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\
    -d '{"model":"demo-mini","stream":true,"input":"Hello, Gantry!"}'

  curl ${base}/v1/chat/completions -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\
    -d '{"model":"demo-mini","messages":[{"role":"user","content":"What is the weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}'

  curl ${base}/v1/models -H "Authorization: Bearer ${seeded.apiKey}"

  curl ${base}/v1/messages -H "x-api-key: ${seeded.apiKey}" -H "anthropic-version: 2023-06-01" -H "Content-Type: application/json" \\
    -d '{"model":"claude-sonnet-4-5","max_tokens":300,"messages":[{"role":"user","content":"Hello, Gantry!"}]}'

  Claude Code:  ANTHROPIC_BASE_URL=${base} ANTHROPIC_API_KEY=${seeded.apiKey} claude -p "Hello, Gantry!"
                (the demo maps claude-* model names to demo-mini: ${DEMO_ALIAS_ENV})

${cliHints(dataDir, invocation)}

Site (client updates, announcements, heartbeats). ${admin.forCurl}

${seeded.siteExamples(base)}

Stop with Ctrl-C.
`;
}

async function demo(values: ParsedArgs["values"]): Promise<number> {
  const flags = { ...values } as Record<string, unknown>;
  // Only the flag keeps data: a GANTRY_DATA_DIR in the environment may well be a real server's.
  const temp = flags["data-dir"] === undefined ? temporaryDataDir() : null;
  if (temp) flags["data-dir"] = temp.path;
  const upstream = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: createSimulatedUpstream() });
  flags["upstream-url"] = `http://127.0.0.1:${upstream.port}/v1`;
  flags["upstream-key"] = "demo-upstream-key";
  // Accounts in the data dir's gantry.toml would clash with the simulated one: the demo has its single upstream.
  flags.upstreams = "[]";
  // Claude Code and the Anthropic SDKs name Claude models: the demo answers them with its simulated one, unless
  // the caller set aliases of their own.
  if (flags["model-aliases"] === undefined && process.env.GANTRY_MODEL_ALIASES === undefined) flags["model-aliases"] = JSON.stringify(DEMO_ALIASES);
  const config = configFrom(flags);
  // The demo is read by a person: short text lines unless JSON was asked for.
  if (config.logFormat === "auto") config.logFormat = "text";
  const { deps, running } = await boot(config);
  // Handlers first: a Ctrl-C from here on stops the demo cleanly (seeding below is synchronous).
  let seeded: DemoSeed | null = null;
  const stopped = waitForSignals(running, deps, () => {
    seeded?.stop();
    void upstream.stop(true);
  }, { stopOnHangup: true });
  seeded = await seedDemo(deps);
  const invocation = selfInvocation();
  const admin = adminTokenLines(await deps.adminAuth.ensureToken(), config.adminToken !== "", config.dataDir, invocation);
  // After every start-up line, so the printout is the last thing on the screen.
  printAfterLogs(printout(running.url, config.dataDir, temp !== null, admin, seeded, invocation));
  const code = await stopped;
  temp?.remove();
  return code;
}
