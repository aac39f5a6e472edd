/**
 * Profiles Gantry under one scenario's load: `bun bench/profile.ts SCENARIO [--duration S] [--top N]`.
 * Starts the fake upstream and Gantry (`bun --cpu-prof`), warms up, runs the scenario's wrk load, stops Gantry
 * so the profile is written, and prints the functions with the most self and inclusive time. The .cpuprofile
 * is kept (path printed) for Chrome DevTools or speedscope.
 */
import { mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runWrk } from "./load";
import { SCENARIOS, type BenchContext } from "./scenarios";
import { GANTRY_SOURCE, UPSTREAM_KEY, ADMIN_TOKEN, BUN, createKey, freePort, startUpstream, sleep } from "./servers";
import { captureDocument, createAnnouncements, publishCatalogue } from "./fixtures";
import { summarize } from "./profile-summary";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { duration: { type: "string" }, top: { type: "string" }, "log-level": { type: "string" } },
  allowPositionals: true,
});
const sc = SCENARIOS.find((s) => s.name === positionals[0]);
if (!sc || sc.kind !== "pair" || sc.target.server !== "gantry") {
  process.stderr.write(`usage: bun bench/profile.ts SCENARIO (a pair scenario whose target is Gantry: ${SCENARIOS.filter((s) => s.kind === "pair" && s.target.server === "gantry").map((s) => s.name).join(", ")})\n`);
  process.exit(2);
}
const duration = Number(values.duration ?? 8);
const top = Number(values.top ?? 30);

const workDir = mkdtempSync(join(tmpdir(), "gantry-profile-"));
const profDir = join(workDir, "profile");
mkdirSync(profDir);
const upstream = await startUpstream(workDir, null);
const dataDir = join(workDir, "data");
mkdirSync(dataDir);
const apiKey = await createKey(dataDir, "profile");
const needsSite = !sc.target.load.toString().includes("/v1/");
if (needsSite) {
  await publishCatalogue(dataDir, workDir, 1024 * 1024, 6);
  await createAnnouncements(dataDir);
}
const port = await freePort();
const gantry = Bun.spawn(
  [BUN, "--cpu-prof", `--cpu-prof-dir=${profDir}`, join(GANTRY_SOURCE, "src/main.ts"), "serve", "--port", String(port), "--data-dir", dataDir,
    "--upstream-url", upstream.url + "/v1", "--upstream-key", UPSTREAM_KEY, "--admin-token", ADMIN_TOKEN, "--log-level", values["log-level"] ?? "info"],
  { stdout: Bun.file(join(workDir, "gantry.log")), stderr: "inherit", cwd: GANTRY_SOURCE },
);
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try {
    await fetch(url + "/healthz");
    break;
  } catch {
    await sleep(50);
  }
}
if (needsSite) await captureDocument(url + "/api/v1/latest", join(workDir, "latest.json"));
const ctx: BenchContext = {
  servers: {},
  apiKey,
  limitedKey: apiKey,
  workDir,
  quick: false,
  durationSeconds: duration,
  download: { assetId: 0, size: 0 },
  mintTokens: async () => [],
};
const request = await sc.target.load(ctx);
await runWrk({ baseUrl: url, request, connections: sc.connections, durationSeconds: 2, workDir });
const load = await runWrk({ baseUrl: url, request, connections: sc.connections, durationSeconds: duration, workDir });
gantry.kill("SIGTERM");
await gantry.exited;
await upstream.stop();
const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
process.stdout.write(`${sc.name}: ${load.rps.toFixed(0)} req/s under profiling\n`);
if (!file) {
  process.stdout.write("no profile written\n");
  process.exit(1);
}
process.stdout.write(`profile: ${join(profDir, file)}\n${summarize(join(profDir, file), top)}`);
