/**
 * A caller that stops reading cannot pin the gateway: a streamed reply whose caller has not taken a chunk for
 * GANTRY_WRITE_STALL_SECONDS is given up - its upstream stream aborted, its concurrency slot freed, the call
 * settled as 499 caller_stalled (charged for what was produced). What the stalled caller holds is its socket's
 * buffers: Bun stops pulling a reply whose socket is full.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

/** Far more than the socket buffers between Gantry and a caller hold (200,000 deltas, about 30 MB of events). */
const LONG = "word ".repeat(200_000);

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
let port: number;

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: (body) => (String(JSON.stringify(body)).includes("short") ? { kind: "text", text: "short answer" } : { kind: "text", text: LONG, deltas: 200_000 }) });
  g = await startGantry({ config: { upstreamUrl: upstream.url, writeStallSeconds: 1, idleTimeoutSeconds: 1 } });
  key = await g.createKey({ concurrency: 1 });
  port = Number(new URL(g.url).port);
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** Sends a request and never reads the reply. */
function neverRead(path: string, body: object, extra = ""): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const json = JSON.stringify(body);
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
      );
      socket.pause();
      resolve({ socket, closed: () => closed });
    });
    socket.on("close", () => (closed = true));
    socket.on("error", reject);
  });
}

const stalledRows = () =>
  g.query("SELECT status, error_code, endpoint, request_id, CAST(input_tokens AS DOUBLE PRECISION) AS input_tokens, CAST(output_tokens AS DOUBLE PRECISION) AS output_tokens, CAST(estimated AS INTEGER) AS estimated FROM usage_ledger WHERE error_code = 'caller_stalled' ORDER BY id");

describe.each([
  ["responses", "/v1/responses", { model: "m", input: "long", stream: true }, ""],
  ["chat", "/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "long" }], stream: true }, ""],
  ["raw passthrough", "/v1/responses", { model: "m", input: "long", instructions: "x", stream: true, store: false }, "X-Upstream-Mode: raw\r\n"],
] as const)("%s", (_name, path, body, extra) => {
  test("a stream nobody reads is given up: upstream aborted, slot freed, settled as caller_stalled", async () => {
    const before = (await stalledRows()).length;
    const aborted = upstream.aborted;
    const caller = await neverRead(path, body, extra);
    const { value: rows } = await pollUntil(stalledRows, (r) => r.length > before, { what: "the stalled call to be settled", timeoutMs: 20_000, stepMs: 50 });
    const row = rows.at(-1)!;
    expect(row).toMatchObject({ status: 499, error_code: "caller_stalled", estimated: 1 });
    expect(row.output_tokens).toBeGreaterThan(0);
    await pollUntil(() => upstream.aborted > aborted, Boolean, { what: "the upstream stream to be aborted" });
    // The key's only concurrency slot is free again. On a new connection: the server's idle timeout here is 1 s, so
    // a pooled connection from the previous case may be closed by the server just as this request is written on it.
    const next = await fetch(`${g.url}/v1/responses`, {
      method: "POST",
      keepalive: false,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "short" }),
    });
    expect(next.status).toBe(200);
    expect((await next.json()).output_text).toBe("short answer");
    caller.socket.destroy();
  }, 60_000);
});
