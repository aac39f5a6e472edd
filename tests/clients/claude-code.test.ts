/**
 * Claude Code itself (`claude -p`, the native binary npm installs with @anthropic-ai/claude-code) pointed at Gantry,
 * with the fake upstream behind it and an operator's alias for the model names Claude Code sends: a plain prompt,
 * and a tool round trip in which Claude Code runs Bash and sends the output back. Also what Claude Code sends, as
 * captured from it (tests/fixtures/claude-code), through /v1/messages and /v1/messages/count_tokens.
 *
 * Skipped, saying so, only when the binary is absent (npm ci without its postinstall); never otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPoolOfTwo, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { displayPrefix } from "../../src/secrets";

const ROOT = join(import.meta.dir, "../..");
const CLAUDE = join(ROOT, "node_modules/.bin/claude");
const present = existsSync(CLAUDE);
if (!present) console.warn(`claude-code.test.ts: skipped, ${CLAUDE} is absent (npm ci installs it through @anthropic-ai/claude-code's postinstall)`);

/** Long enough for Claude Code to start, make its requests and run a tool on a loaded 2-core machine. */
const RUN_TIMEOUT_MS = 90_000;

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;
const dirs: string[] = [];

beforeAll(async () => {
  pool = await startPoolOfTwo();
  upstream = pool.upstream;
  g = await startGantry({ config: { ...pool.config, modelAliases: { "claude-*": "gpt-5.4" } } });
});
afterAll(async () => {
  await g.stop();
  await pool.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** `claude -p PROMPT --output-format json` in a fresh HOME and working directory; its parsed result. */
async function claude(key: string, prompt: string, extra: string[] = []): Promise<{ result: any; stderr: string; cwd: string }> {
  const cwd = tempDir("gantry-claude-cwd-");
  const proc = Bun.spawn([CLAUDE, "-p", prompt, "--output-format", "json", ...extra], {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: tempDir("gantry-claude-home-"),
      ANTHROPIC_BASE_URL: g.url,
      ANTHROPIC_API_KEY: key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
    },
  });
  const timer = setTimeout(() => proc.kill(), RUN_TIMEOUT_MS);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(timer);
  let result: any;
  try {
    result = JSON.parse(stdout);
  } catch {
    throw new Error(`claude printed no JSON (exit ${proc.exitCode}): ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`);
  }
  return { result, stderr, cwd };
}

async function ledgerRows(keyPrefix: string): Promise<Array<Record<string, any>>> {
  return g.query(
    "SELECT l.model, l.endpoint, l.status FROM usage_ledger l JOIN api_keys k ON k.id = l.key_id WHERE k.prefix = $1 ORDER BY l.id",
    keyPrefix,
  );
}

/** The function_call_output items of an upstream request. */
const outputsOf = (body: any): string[] =>
  (Array.isArray(body?.input) ? body.input : []).filter((it: any) => it?.type === "function_call_output").map((it: any) => (typeof it.output === "string" ? it.output : JSON.stringify(it.output)));

describe.skipIf(!present)("Claude Code through Gantry", () => {
  test(
    "a plain prompt: the result is the upstream's text, the upstream got the alias's target, the ledger has the call",
    async () => {
      const key = await g.createKey();
      const prefix = displayPrefix(key);
      const before = upstream.requests.length;
      upstream.setScenario({ kind: "text", text: "Hello from the fake upstream via Gantry." });
      try {
        const { result } = await claude(key, "Say hello");
        expect(result.is_error).toBe(false);
        expect(result.result).toBe("Hello from the fake upstream via Gantry.");
      } finally {
        upstream.setScenario();
      }
      const sent = upstream.requests.slice(before).filter((r) => r.path.endsWith("/responses"));
      expect(sent.length).toBeGreaterThanOrEqual(1);
      expect(sent.every((r) => r.body.model === "gpt-5.4")).toBe(true);
      const { value: rows } = await pollUntil(() => ledgerRows(prefix), (r) => r.length >= 1, { what: "the ledger row of Claude Code's call" });
      expect(rows[0]).toMatchObject({ model: "gpt-5.4", endpoint: "messages", status: 200 });
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  test(
    "a tool round trip: the upstream calls Bash, Claude Code runs it and sends its output back, the upstream's answer depends on it",
    async () => {
      const key = await g.createKey();
      const before = upstream.requests.length;
      const scenario = (body: any): Scenario => {
        const outputs = outputsOf(body);
        if (outputs.length === 0) return { kind: "calls", calls: [{ name: "Bash", arguments: JSON.stringify({ command: "echo gantry-ok", description: "Print a marker" }) }] };
        return { kind: "text", text: outputs.some((o) => o.includes("gantry-ok")) ? "The tool printed gantry-ok." : `No marker in: ${outputs.join(" | ").slice(0, 200)}` };
      };
      upstream.setScenario(scenario);
      let result: any;
      try {
        // -p refuses tools that would ask for permission; this one command is allowed, nothing else.
        ({ result } = await claude(key, "Run the marker command", ["--allowedTools", "Bash(echo gantry-ok)"]));
      } finally {
        upstream.setScenario();
      }
      expect(result.permission_denials).toEqual([]);
      expect(result.result).toBe("The tool printed gantry-ok.");
      const sent = upstream.requests.slice(before).filter((r) => r.path.endsWith("/responses"));
      const withOutput = sent.filter((r) => outputsOf(r.body).length > 0);
      expect(withOutput.length).toBeGreaterThanOrEqual(1);
      // The tool's output reached the upstream as a function_call_output answering the call it made.
      const call = withOutput[0].body.input.find((it: any) => it.type === "function_call" && it.name === "Bash");
      const output = withOutput[0].body.input.find((it: any) => it.type === "function_call_output");
      expect(call).toBeDefined();
      expect(output.call_id).toBe(call.call_id);
      expect(outputsOf(withOutput[0].body).join("")).toContain("gantry-ok");
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});

describe("what Claude Code sends (captured), through Gantry", () => {
  const captured = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/claude-code/messages-request.json"), "utf8"));

  test("the captured request is answered, streamed, with the upstream getting the alias's target", async () => {
    const key = await g.createKey();
    const before = upstream.requests.length;
    const res = await fetch(`${g.url}${captured.path}`, { method: "POST", headers: { ...captured.headers, "x-api-key": key }, body: JSON.stringify(captured.body) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("event: message_stop");
    expect(upstream.requests.slice(before).map((r) => r.body.model)).toEqual(["gpt-5.4"]);
  });

  test("count_tokens on it: a real count of its system prompt, tools and turns", async () => {
    const key = await g.createKey();
    const { model, messages, system, tools } = captured.body;
    const res = await fetch(`${g.url}/v1/messages/count_tokens?beta=true`, {
      method: "POST",
      headers: { ...captured.headers, "x-api-key": key },
      body: JSON.stringify({ model, messages, system, tools }),
    });
    expect(res.status).toBe(200);
    const { input_tokens } = (await res.json()) as { input_tokens: number };
    // About 49 KB of JSON: thousands of tokens, well under the bytes/4 estimate's count of the JSON syntax too.
    expect(input_tokens).toBeGreaterThan(5_000);
    expect(input_tokens).toBeLessThan(JSON.stringify(captured.body).length / 3);
  });
});
