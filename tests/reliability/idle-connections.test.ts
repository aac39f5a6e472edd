/**
 * No unauthenticated client can hold the server: connections that send half a request (to any path, gateway
 * paths included) and wait are closed after the idle timeout, as are kept-alive connections between requests (also
 * after an admitted stream), while the server goes on answering others. Before, the idle cut was switched off for
 * any path ending in /responses or /chat/completions before authentication, for the rest of the connection.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let port: number;

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "streamed" } });
  g = await startGantry({ config: { upstreamUrl: upstream.url, idleTimeoutSeconds: 1 } });
  key = await g.createKey();
  port = Number(new URL(g.url).port);
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

interface Held {
  socket: Socket;
  closed: boolean;
  received: string;
}

function hold(request: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const held: Held = { socket: null as unknown as Socket, closed: false, received: "" };
    held.socket = connect(port, "127.0.0.1", () => {
      held.socket.write(request);
      resolve(held);
    });
    held.socket.on("data", (d) => (held.received += d.toString()));
    held.socket.on("close", () => (held.closed = true));
    held.socket.on("error", reject);
  });
}

const partialBody = (path: string, auth: boolean) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${key}\r\n` : ""}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`;

test("half requests and idle kept-alive connections are closed; others are answered meanwhile", async () => {
  const held: Held[] = [];
  for (let i = 0; i < 60; i++) {
    held.push(await hold(partialBody("/x/responses", false)));
    held.push(await hold(partialBody("/v1/responses", false)));
    held.push(await hold(partialBody("/v1/chat/completions", true)));
    held.push(await hold("GET /dl/abcdef HTTP/1.1\r\nHost: x\r\n")); // headers never finished
  }
  // A kept-alive connection after a whole admitted stream: idle between requests, so cut too.
  const body = JSON.stringify({ model: "m", input: "hi", stream: true });
  const afterStream = await hold(
    `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  held.push(afterStream);

  for (let i = 0; i < 5; i++) expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
  await pollUntil(() => afterStream.received.includes("response.completed"), Boolean, { what: "the stream to be answered" });

  const { value: open } = await pollUntil(() => held.filter((h) => !h.closed).length, (n) => n === 0, {
    what: "every held connection to be closed by the server",
    timeoutMs: 45_000,
    stepMs: 50,
  });
  expect(open).toBe(0);
  expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
}, 70_000);

test("an admitted stream that stays silent longer than the idle timeout is not cut", async () => {
  upstream.setScenario({ kind: "slow", delayMs: 1500, text: "slow words arrive", deltas: 3 });
  try {
    const res = await fetch(`${g.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi", stream: true }),
    });
    const text = await res.text();
    expect(text).toContain("response.completed");
  } finally {
    upstream.setScenario({ kind: "text", text: "streamed" });
  }
}, 30_000);
