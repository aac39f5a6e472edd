/**
 * Nothing secret in the logs: a full run of a `gantry serve` process at debug level (stdout and stderr
 * captured from start to exit), with an upstream key, an admin token and a sync token from the environment,
 * API keys created with the CLI and through the admin API, and every way a secret travels: gateway calls
 * (both endpoints, streamed and not, raw passthrough, models), refused keys (unknown, disabled, malformed),
 * upstream failures, the admin API by token and by session, wrong admin tokens, the admin sign-in, the
 * portal, /metrics. Then no six characters in a row of any secret's random part may be in the output: not the
 * whole secret, not its start (the settings line once showed the first six characters of each), not its end.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

function randomSecret(prefix: string): string {
  return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
}

const UPSTREAM_KEY = randomSecret("sk-upstream-");
// An operator's own token, random from its first character, as an S3 secret key is.
const ADMIN_TOKEN = randomSecret("");
const SYNC_TOKEN = randomSecret("ghp_sync");
const S3_SECRET = randomSecret("");
/** Looks like one of ours, was never issued. */
const UNKNOWN_KEY = randomSecret("gk-");

let dataDir: string;
let upstream: FakeUpstream;
let server: ServeProcess;
/** Every secret the run used, by a name for the failure message. */
const secrets = new Map<string, string>([
  ["upstream key", UPSTREAM_KEY],
  ["admin token", ADMIN_TOKEN],
  ["sync token", SYNC_TOKEN],
  ["S3 secret access key", S3_SECRET],
  ["unknown key", UNKNOWN_KEY],
]);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gantry-secrets-"));
  // The upstream accepts only the configured key, so a run that reaches it proves the key was sent.
  upstream = await startFakeUpstream({ apiKey: UPSTREAM_KEY });
  for (const name of ["secrets-a", "secrets-b", "secrets-disabled"]) {
    secrets.set(`cli key ${name}`, JSON.parse(await gantryCommand(["keys", "create", "--name", name, "--json", "--data-dir", dataDir])).key);
  }
  await gantryCommand(["keys", "disable", "secrets-disabled", "--data-dir", dataDir]);
  server = await startServe({
    dataDir,
    upstreamUrl: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    // The token and the sync token from the environment, as an operator's unit file would set them.
    env: { GANTRY_ADMIN_TOKEN: ADMIN_TOKEN, GANTRY_SYNC_TOKEN: SYNC_TOKEN, GANTRY_S3_SECRET_ACCESS_KEY: S3_SECRET, GANTRY_LOG_LEVEL: "debug" },
    args: ["--log-level", "debug"],
  });
});

afterAll(async () => {
  server?.kill("SIGKILL");
  await server?.exited;
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(path: string, init: RequestInit & { bearer?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.bearer !== undefined) headers.set("authorization", `Bearer ${init.bearer}`);
  if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
  const res = await fetch(server.url + path, { ...init, headers });
  await res.clone().arrayBuffer();
  return res;
}

const hello = { model: "gpt-5.4-mini", input: "hello" };
const chatHello = { model: "gpt-5.4-mini", messages: [{ role: "user", content: "hello" }] };

test("a full run logs no six characters in a row of any secret it used", async () => {
  const keyA = secrets.get("cli key secrets-a")!;
  const keyB = secrets.get("cli key secrets-b")!;
  const disabled = secrets.get("cli key secrets-disabled")!;

  // Gateway: valid calls on every path.
  for (const stream of [false, true]) {
    expect((await call("/v1/responses", { method: "POST", bearer: keyA, body: JSON.stringify({ ...hello, stream }) })).status).toBe(200);
    expect((await call("/chat/completions", { method: "POST", bearer: keyB, body: JSON.stringify({ ...chatHello, stream }) })).status).toBe(200);
  }
  const raw = await call("/v1/responses", {
    method: "POST",
    bearer: keyA,
    headers: { "x-upstream-mode": "raw" },
    body: JSON.stringify({ ...hello, stream: true, store: false, instructions: "Answer." }),
  });
  expect(raw.status).toBe(200);
  expect((await call("/v1/models", { bearer: keyA })).status).toBe(200);

  // Refused keys: unknown, disabled, malformed, in the other spellings callers use.
  expect((await call("/v1/responses", { method: "POST", bearer: UNKNOWN_KEY, body: JSON.stringify(hello) })).status).toBe(401);
  expect((await call("/v1/chat/completions", { method: "POST", bearer: disabled, body: JSON.stringify(chatHello) })).status).toBe(403);
  expect((await call("/v1/models", { headers: { authorization: `Basic ${btoa(`user:${keyA}`)}` } })).status).toBe(401);
  expect((await call("/v1/models", { headers: { authorization: `Bearer ${keyA} trailing` } })).status).toBe(401);
  expect((await call("/v1/models", { headers: { "x-api-key": keyA } })).status).toBe(401);
  // Body problems of an authenticated caller (the key travels with them).
  expect((await call("/v1/responses", { method: "POST", bearer: keyB, body: "{not json" })).status).toBe(400);
  expect((await call("/v1/responses", { method: "POST", bearer: keyB, body: JSON.stringify({ input: keyB }) })).status).toBe(400);

  // Upstream failures: the gateway's own upstream credential is in the request that failed.
  upstream.setScenario({ kind: "status", status: 500 });
  expect((await call("/v1/responses", { method: "POST", bearer: keyA, body: JSON.stringify(hello) })).status).toBeGreaterThanOrEqual(500);
  upstream.setScenario({ kind: "reset-mid-stream", afterEvents: 2 });
  await call("/v1/responses", { method: "POST", bearer: keyA, body: JSON.stringify({ ...hello, stream: true }) });
  upstream.setScenario();

  // Admin API by token: list, create (the new secret is in the reply), use the new key, usage.
  expect((await call("/admin/api/keys", { bearer: ADMIN_TOKEN })).status).toBe(200);
  const created = await call("/admin/api/keys", { method: "POST", bearer: ADMIN_TOKEN, body: JSON.stringify({ name: "secrets-api" }) });
  expect(created.status).toBe(201);
  const apiKey = ((await created.json()) as { key: string }).key;
  secrets.set("admin-API key", apiKey);
  // The portal reloads the key cache on a miss (the gateway's reloads twice a second): after it, the new key works
  // on the gateway at once, without guessing at the reload timing (each miss would count as a wrong key).
  expect((await call("/portal/api/usage", { method: "POST", bearer: apiKey })).status).toBe(200);
  expect((await call("/v1/responses", { method: "POST", bearer: apiKey, body: JSON.stringify(hello) })).status).toBe(200);
  expect((await call("/admin/api/keys/secrets-api/usage", { bearer: ADMIN_TOKEN })).status).toBe(200);
  expect((await call("/metrics", { bearer: ADMIN_TOKEN })).status).toBe(200);
  // A wrong admin token that shares the real one's beginning (a log of a prefix would show it).
  expect((await call("/admin/api/keys", { bearer: ADMIN_TOKEN.slice(0, 20) + "x".repeat(20) })).status).toBe(401);

  // The admin sign-in (a form post), then the session: its cookie and CSRF token are secrets too.
  const failed = await call("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: ADMIN_TOKEN + "-wrong" }).toString(),
  });
  expect(failed.status).toBe(401);
  const signIn = await call("/admin/sign-in", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: ADMIN_TOKEN, next: "/admin/keys" }).toString(),
  });
  expect(signIn.status).toBe(303);
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
  expect(cookie).toContain("=");
  secrets.set("session cookie", cookie.slice(cookie.indexOf("=") + 1));
  const page = await call("/admin/keys", { headers: { cookie } });
  expect(page.status).toBe(200);
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1];
  expect(csrf).toBeDefined();
  secrets.set("CSRF token", csrf!);
  const bySession = await call("/admin/api/keys", { method: "POST", headers: { cookie, "x-csrf-token": csrf! }, body: JSON.stringify({ name: "secrets-session" }) });
  expect(bySession.status).toBe(201);
  secrets.set("session-created key", ((await bySession.json()) as { key: string }).key);

  // The portal: the key holder's own view, a wrong key, the page.
  expect((await call("/portal")).status).toBe(200);
  expect((await call("/portal/api/usage", { method: "POST", bearer: keyB })).status).toBe(200);
  expect((await call("/portal/api/usage", { method: "POST", bearer: UNKNOWN_KEY })).status).toBe(401);

  // A clean stop, so the shutdown lines are in the output too.
  server.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  const output = server.output();
  // The run did log: a request line per call, up to the last one, answered just before the signal.
  expect(output.split("\n").filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(30);
  expect(output).toMatch(/"route":"\/portal\/api\/usage","method":"POST","status":401/);

  const found: string[] = [];
  for (const [name, secret] of secrets) {
    // The random part: the 32 characters after a fixed prefix such as gk- (whose letters may well be logged).
    const random = secret.slice(-32);
    expect(random.length).toBe(32);
    if (output.includes(secret)) found.push(`${name} (whole)`);
    for (let i = 0; i + 6 <= random.length; i++) {
      if (output.includes(random.slice(i, i + 6))) {
        found.push(`${name} (characters ${secret.length - 32 + i + 1}-${secret.length - 32 + i + 6})`);
        break;
      }
    }
  }
  expect(found).toEqual([]);
  // And no credential-bearing header made it in, whatever its value.
  expect(output).not.toMatch(/bearer\s+[A-Za-z0-9_-]{8,}/i);
  if (process.env.GANTRY_SHOW_LOG) console.log(output);
  console.log(`[log-secrets] ${secrets.size} secrets, ${output.length} bytes of log (${output.split("\n").length} lines): none found`);
});
