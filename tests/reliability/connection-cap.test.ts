/**
 * One client address cannot take every descriptor: a `gantry serve` process with 256 descriptors and
 * --max-connections-per-address 32 is sent 300 requests from 127.0.0.2 whose headers never end (the idle cut is two
 * minutes away): the connections past 32 are closed within a few seconds, /healthz and an authenticated call from
 * 127.0.0.1 are answered. A trusted proxy's address (127.0.0.3) is not capped. Without the cap, the 300 hold every
 * descriptor and nothing else is accepted until Bun gives up on their headers. The open-file limit is raised to the
 * hard limit at start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

const LIMIT = 256;
const CAP = 32;
const HELD = 300;
const PROXIED = 40;
/** The cap's rounds come every second (every tenth while it cuts). Without the cap: about 11 s here. */
const HEALTHZ_WITHIN_MS = 5_000;
const ADMIN = "gat-connection-cap-admin-token-000001";
const prlimit = Bun.which("prlimit");
const tempDir = tempDirs();

interface Held {
  socket: Socket;
  closed: boolean;
}

/** A connection from `from` that sends half a request and waits. */
function hold(port: number, from: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const held: Held = { socket: null as unknown as Socket, closed: false };
    held.socket = connect({ port, host: "127.0.0.1", localAddress: from }, () => {
      held.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n"); // headers never finished
      resolve(held);
    });
    held.socket.on("data", () => {}); // read, so that the server's close is seen
    held.socket.on("close", () => (held.closed = true));
    held.socket.on("error", (err) => (held.closed ? undefined : held.socket.connecting ? reject(err) : undefined));
  });
}

function openFiles(pid: number): { soft: number; hard: number } {
  const m = /^Max open files\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))!;
  return { soft: Number(m[1]), hard: Number(m[2]) };
}

describe.skipIf(!prlimit)("connections per address", () => {
  let upstream: FakeUpstream;
  let server: ServeProcess;
  let key: string;
  const held: Held[] = [];

  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "text", text: "still answered" } });
    const dataDir = tempDir("connection-cap");
    key = JSON.parse(await gantryCommand(["keys", "create", "--name", "cap", "--json", "--data-dir", dataDir])).key;
    server = await startServe({
      dataDir,
      upstreamUrl: upstream.url,
      upstreamKey: "upstream-key-cap",
      adminToken: ADMIN,
      args: ["--max-connections-per-address", String(CAP), "--idle-timeout-seconds", "120", "--trusted-proxies", "127.0.0.3"],
      wrap: [prlimit!, `--nofile=${LIMIT}:${LIMIT}`],
    });
  });
  afterAll(async () => {
    for (const h of held) h.socket.destroy();
    server?.kill("SIGKILL");
    await server?.exited;
    await upstream?.close();
  });

  test("one address holding 300 half requests is cut to its cap; /healthz and an authenticated call are answered", async () => {
    expect(openFiles(server.pid)).toEqual({ soft: LIMIT, hard: LIMIT });
    const proxied: Held[] = [];
    for (let i = 0; i < PROXIED; i++) proxied.push(await hold(server.port, "127.0.0.3"));
    const attacker: Held[] = [];
    for (let i = 0; i < HELD; i++) attacker.push(await hold(server.port, "127.0.0.2"));
    held.push(...proxied, ...attacker);

    const healthz = async () => {
      try {
        // A new connection each time (a kept-alive one would need no descriptor).
        const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2000), keepalive: false });
        await res.arrayBuffer();
        return res.status;
      } catch (err) {
        return (err as Error).name;
      }
    };
    const { elapsedMs } = await pollUntil(healthz, (s) => s === 200, { what: "/healthz to be answered while one address holds connections", timeoutMs: 30_000, stepMs: 100 });
    // Within a few rounds of the cap (a second each). Without the cap the half requests hold every descriptor until
    // Bun gives up on their headers (about 20 s here), and an authenticated call meanwhile ends the process: Bun
    // exits when it cannot get a descriptor for the upstream connection.
    expect(elapsedMs).toBeLessThan(HEALTHZ_WITHIN_MS);
    const { value: open } = await pollUntil(() => attacker.filter((h) => !h.closed).length, (n) => n <= CAP, {
      what: `127.0.0.2 to be cut to ${CAP} connections`,
      timeoutMs: 30_000,
      stepMs: 50,
    });
    expect(open).toBe(CAP);
    // The trusted proxy's connections were all left alone.
    expect(proxied.filter((h) => h.closed).length).toBe(0);

    const res = await fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi" }),
      signal: AbortSignal.timeout(20_000),
      keepalive: false,
    });
    expect(res.status).toBe(200);
    expect((await res.json()).output_text).toBe("still answered");
    expect(server.fdCount()).toBeLessThan(LIMIT);
    expect(server.output()).toContain("an address holds more connections than allowed");
    console.log(`[connection-cap] ${HELD} held from one address: /healthz answered after ${Math.round(elapsedMs)} ms, ${open} left open, server fds ${server.fdCount()} of ${LIMIT}`);
  }, 90_000);
});

test.skipIf(!prlimit)("the open-file limit is raised to the hard limit at start, and logged", async () => {
  const upstream = await startFakeUpstream();
  const server = await startServe({ dataDir: tempDir("open-files"), upstreamUrl: upstream.url, adminToken: ADMIN, wrap: [prlimit!, "--nofile=256:2048"] });
  try {
    expect(openFiles(server.pid)).toEqual({ soft: 2048, hard: 2048 });
    await pollUntil(() => server.output(), (out) => out.includes('"open files"') || out.includes("open files"), { what: "the open-files log line" });
    expect(server.output()).toMatch(/open files.*2048/);
  } finally {
    server.kill("SIGKILL");
    await server.exited;
    await upstream.close();
  }
}, 30_000);
