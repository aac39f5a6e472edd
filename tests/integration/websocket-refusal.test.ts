/**
 * Codex (CLI and SDK), given a base URL, first tries the Responses API over a WebSocket on /v1/responses and falls
 * back to HTTP at once on a 426; a 405 made it retry five times (about 6 s a turn). The attempt is made here as
 * real clients make it: a raw HTTP/1.1 upgrade request, and Bun's WebSocket client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
let key: string;
let port: number;

beforeAll(async () => {
  g = await startGantry();
  key = await g.createKey();
  port = Number(new URL(g.url).port);
});
afterAll(() => g.stop());

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request written as bytes on a fresh connection; the reply read until the server has sent its whole body. */
function rawRequest(lines: string[]): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(lines.join("\r\n") + "\r\n\r\n"));
    let text = "";
    const finish = () => {
      const head = text.slice(0, text.indexOf("\r\n\r\n"));
      const [statusLine, ...headerLines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of headerLines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
      const body = text.slice(head.length + 4);
      if (headers["content-length"] === undefined || Buffer.byteLength(body) < Number(headers["content-length"])) return false;
      socket.destroy();
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
      return true;
    };
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
      if (text.includes("\r\n\r\n")) finish();
    });
    socket.on("error", reject);
    socket.on("close", () => finish() || reject(new Error(`connection closed after: ${JSON.stringify(text)}`)));
  });
}

const upgrade = (path: string) => [
  `GET ${path} HTTP/1.1`,
  `Host: 127.0.0.1:${port}`,
  "Connection: Upgrade",
  "Upgrade: websocket",
  "Sec-WebSocket-Version: 13",
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  `Authorization: Bearer ${key}`,
  "OpenAI-Beta: responses_websockets=2026-02-04",
];

describe("a WebSocket attempt on the responses endpoint", () => {
  for (const path of ["/v1/responses", "/responses", "/v1/responses/"]) {
    test(`${path}: 426 upgrade_required with the error envelope, and no switch of protocol`, async () => {
      const reply = await rawRequest(upgrade(path));
      expect(reply.status).toBe(426);
      expect(reply.headers["content-type"]).toStartWith("application/json");
      const body = JSON.parse(reply.body);
      expect(body.error).toMatchObject({ code: "upgrade_required", type: "invalid_request_error", param: null });
      expect(body.error.message).toContain("POST");
    });
  }

  test("without a key too (nothing is revealed, and the client learns to use HTTP before it authenticates)", async () => {
    const reply = await rawRequest(upgrade("/v1/responses").filter((l) => !l.startsWith("Authorization")));
    expect(reply.status).toBe(426);
  });

  test("Bun's WebSocket client does not get a connection (the handshake is refused)", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { headers: { authorization: `Bearer ${key}` } } as any);
    const outcome = await new Promise<string>((resolve) => {
      ws.onopen = () => resolve("open");
      ws.onerror = () => resolve("error");
      ws.onclose = () => resolve("close");
    });
    expect(outcome).not.toBe("open");
  });

  test("a GET that asks for no upgrade is still 405 with Allow: POST; other paths keep their answers", async () => {
    const plain = await fetch(`${g.url}/v1/responses`);
    expect(plain.status).toBe(405);
    expect(plain.headers.get("allow")).toBe("POST");
    expect((await plain.json()).error.code).toBe("method_not_allowed");
    // Chat has no WebSocket form in any client: an upgrade there is an ordinary wrong method.
    const chat = await rawRequest(upgrade("/v1/chat/completions"));
    expect(chat.status).toBe(405);
    // A stored response's path is served by GET: an upgrade there is an ordinary authenticated GET (404 here).
    expect((await rawRequest(upgrade("/v1/responses/resp_x"))).status).toBe(404);
    // Other methods still list POST alone.
    expect((await fetch(`${g.url}/v1/responses`, { method: "PUT" })).headers.get("allow")).toBe("POST");
    // The POST endpoint itself is unchanged (no upstream configured: 503, after authentication).
    const post = await fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi" }) });
    expect(post.status).toBe(503);
  });
});
