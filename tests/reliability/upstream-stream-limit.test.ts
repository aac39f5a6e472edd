/**
 * Bun's fetch runs at most 256 requests at once unless BUN_CONFIG_MAX_HTTP_REQUESTS is set when the process
 * starts. `gantry serve` sets it itself (it re-executes itself, keeping its pid): 300 streams held open by the
 * upstream are all open upstream at once, with nothing set by the operator and no warning. The callers are raw
 * sockets, since this test process's own fetch has the 256 ceiling.
 */
import { afterAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

const STREAMS = 300;
const UPSTREAM_KEY = "sk-stream-limit-test";
const sockets: Socket[] = [];
const servers: ServeProcess[] = [];
let upstream: FakeUpstream | undefined;
afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const s of servers) {
    s.kill("SIGKILL");
    await s.exited;
  }
  await upstream?.close();
});
// Registered after the hook above, so it runs after it: the servers are gone before their directories.
const tempDir = tempDirs();

/** The environment the process with this pid runs with now (after any re-execution). */
function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

/** A streamed /v1/responses call on a socket of its own, left open. */
function openStream(port: number, key: string): Socket {
  const body = JSON.stringify({ model: "gpt-5.4-mini", input: "hello", stream: true });
  const socket = connect(port, "127.0.0.1", () => {
    socket.write(
      `POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  socket.on("error", () => {});
  socket.resume();
  return socket;
}

test(`with nothing set, ${STREAMS} upstream streams are open at once, and the pid is the server's`, async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "hang-mid-stream", afterEvents: 2 }, apiKey: UPSTREAM_KEY });
  const dataDir = tempDir("stream-limit");
  const key = JSON.parse(await gantryCommand(["keys", "create", "--name", "many", "--json", "--data-dir", dataDir])).key;
  // startServe passes PATH and HOME only: no BUN_CONFIG_MAX_HTTP_REQUESTS.
  const server = await startServe({ dataDir, upstreamUrl: upstream.url, upstreamKey: UPSTREAM_KEY, args: ["--shutdown-grace-seconds", "1"] });
  servers.push(server);
  expect(environOf(server.pid).get("BUN_CONFIG_MAX_HTTP_REQUESTS")).toBe("4096");
  expect(Number(readFileSync(join(dataDir, "gantry.pid"), "utf8").trim())).toBe(server.pid);

  for (let i = 0; i < STREAMS; i++) sockets.push(openStream(server.port, key));
  // Before: 256 open and the rest queued inside Gantry's process for as long as those last.
  await pollUntil(() => upstream!.open, (n) => n === STREAMS, { timeoutMs: 30_000, stepMs: 50, what: `${STREAMS} streams open upstream` });

  for (const s of sockets.splice(0)) s.destroy();
  server.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  expect(server.output()).not.toContain("BUN_CONFIG_MAX_HTTP_REQUESTS");
}, 60_000);

test("an operator's own value stands", async () => {
  upstream ??= await startFakeUpstream({});
  const server = await startServe({ dataDir: tempDir("stream-limit"), upstreamUrl: upstream.url, env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "1000" } });
  servers.push(server);
  expect(environOf(server.pid).get("BUN_CONFIG_MAX_HTTP_REQUESTS")).toBe("1000");
  server.kill("SIGTERM");
  expect(await server.exited).toBe(0);
}, 30_000);
