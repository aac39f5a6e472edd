/**
 * The settings line `gantry serve` logs at start (`listening … settings`) shows where every URL points but none
 * of the credentials an operator may have written into one (`https://user:pass@host`): a real process, its real
 * output. The secrets of whole-secret settings are covered by log-secrets.test.ts.
 */
import { afterAll, expect, test } from "bun:test";
import { describeConfig, loadConfig } from "../../src/config";
import { redactUrlCredentials } from "../../src/redact";
import { sha256Hex } from "../../src/secrets";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { startServe, type ServeProcess } from "./serve-process";

const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.kill("SIGKILL");
    await s.exited;
  }
});
// Registered after the hook above, so it runs after it: the servers are gone before their directories.
const tempDir = tempDirs();

/** Credentials an operator wrote into URL settings: none may be printed. */
const CREDENTIALS = ["upuser", "up-pass-7f3a", "up-pass-tail-0c4e", "syncuser", "sync-pass-91c2", "sync-pass-tail-b7d1", "ghp-token-as-user-5e8d", "pubuser", "pub-pass-22aa"];

test("the settings line at start shows each URL's host but no user name or password inside it", async () => {
  const server = await startServe({
    dataDir: tempDir("settings-line"),
    // Nothing listens there: the server starts all the same and only the settings line matters. Passwords pasted
    // unencoded hold a / or a # (which a URL parser takes for the end of the host).
    upstreamUrl: "http://upuser:up-pass-7f3a/up-pass-tail-0c4e@127.0.0.1:1/v1",
    args: [
      "--sync-api-url", "https://syncuser:sync-pass-91c2#sync-pass-tail-b7d1@api.github.example/",
      "--s3-endpoint", "https://ghp-token-as-user-5e8d@s3.example",
      "--public-url", "https://pubuser:pub-pass-22aa@gantry.example",
    ],
  });
  servers.push(server);
  // The log is written in batches: wait for the line rather than expect it with the first /healthz answer.
  const { value: line } = await pollUntil(() => server.output().split("\n").find((l) => l.includes("listening")), Boolean, { what: "the listening line" });
  for (const c of CREDENTIALS) expect(line).not.toContain(c);
  // Still useful to an operator: where each URL points.
  for (const host of ["127.0.0.1:1/v1", "api.github.example", "s3.example", "gantry.example"]) expect(line).toContain(host);
  server.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  for (const c of CREDENTIALS) expect(server.output()).not.toContain(c);
});

test("database and Redis URLs lose user name and password alike, even with an unescaped @ in the password", () => {
  const config = loadConfig(
    { "data-dir": tempDir("settings-line"), "database-url": "postgres://gantry:pg-p@ss-word@db.internal:5432/gantry", "redis-url": "rediss://default:redis-pass-0a1b@cache.internal:6380" },
    {},
  );
  const shown = JSON.stringify(describeConfig(config));
  for (const secret of ["pg-p", "ss-word", "redis-pass-0a1b", "gantry:", "default:"]) expect(shown).not.toContain(secret);
  expect(shown).toContain("postgres://***@db.internal:5432/gantry");
  expect(shown).toContain("rediss://***@cache.internal:6380");
});

test("a password with an unencoded /, ? or # is hidden whole, in every URL setting", () => {
  const config = loadConfig(
    {
      "data-dir": tempDir("settings-line"),
      "database-url": "postgres://gantry:pg/pass?word@db.internal:5432/gantry",
      "redis-url": "redis://:redis#pass/9e1f@cache.internal:6379",
      "upstream-url": "https://user:up?pass#a1/b2@upstream.example/v1",
      "s3-endpoint": "https://s3user:s3/pass@s3.example",
    },
    {},
  );
  const shown = JSON.stringify(describeConfig(config));
  for (const secret of ["pg/pass", "word@", "redis#pass", "9e1f", "up?pass", "a1/b2", "s3user", "s3/pass", "gantry:", "user:"]) expect(shown).not.toContain(secret);
  expect(shown).toContain("postgres://***@db.internal:5432/gantry");
  expect(shown).toContain("redis://***@cache.internal:6379");
  expect(shown).toContain("https://***@upstream.example/v1");
  expect(shown).toContain("https://***@s3.example");
});

test("secrets show their length and a short hash, none of their characters", () => {
  const config = loadConfig({ "data-dir": tempDir("settings-line"), "admin-token": "Zq9xTokenOfMine-0123456789", "s3-secret-access-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" }, {});
  const shown = describeConfig(config);
  expect(shown.adminToken).toBe(`***(26 chars, sha256 ${sha256Hex("Zq9xTokenOfMine-0123456789").slice(0, 8)})`);
  expect(String(shown.s3SecretAccessKey)).toMatch(/^\*\*\*\(40 chars, sha256 [0-9a-f]{8}\)$/);
  expect(JSON.stringify(shown)).not.toContain("Zq9x");
  expect(JSON.stringify(shown)).not.toContain("wJalrX");
});

test("a URL with no credentials keeps an @ in its path; free text loses the credentials of each URL in it", () => {
  expect(redactUrlCredentials("https://github.com/o/r/releases/download/pkg@1.2.3/app.zip")).toBe("https://github.com/o/r/releases/download/pkg@1.2.3/app.zip");
  expect(redactUrlCredentials("GET https://u:p/w@api.example/x failed; then 'https://tok@h.example/y'")).toBe("GET https://***@api.example/x failed; then 'https://***@h.example/y'");
});
