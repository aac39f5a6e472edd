/**
 * A kept response (`store` not false) that cannot be stored when its stream ends (the database stopped or
 * restarting, a full disk): the answer is withheld as an unrecorded one is. A stream ends with one terminal event,
 * a `response.failed` naming the store, never `response.completed` first; a collected call gets 503 with
 * Retry-After. The ledger records the call as that failure. Then it works again by itself.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
/** What the store throws while set: the errors each backend's driver gives for a store that cannot write. */
let failure: Error | null = null;

const POSTGRES_STOPPED = Object.assign(new Error("Failed to connect"), { name: "PostgresError", code: "ERR_POSTGRES_CONNECTION_REFUSED" });
const DISK_FULL = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "an answer", deltas: 3 } });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  key = await g.createKey();
  const responses = g.deps.responses as { put: (...args: unknown[]) => Promise<void> };
  const put = responses.put.bind(responses);
  responses.put = (...args: unknown[]) => (failure ? Promise.reject(failure) : put(...args));
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const post = (body: object) =>
  fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

async function ledgerRow(requestId: string | null): Promise<Record<string, any> | undefined> {
  const [row] = await g.query("SELECT status, error_code FROM usage_ledger WHERE request_id = $1", requestId);
  return row;
}

for (const [name, err] of [
  ["PostgreSQL refusing connections", POSTGRES_STOPPED],
  ["a full disk", DISK_FULL],
] as const) {
  test(`streamed, kept, ${name}: one terminal event, a failure naming the store; recorded as that failure`, async () => {
    failure = err;
    let res: Response;
    let events: any[];
    try {
      res = await post({ model: "m", input: "hi", stream: true });
      events = await readSseData(res);
    } finally {
      failure = null;
    }
    expect(res.status).toBe(200);
    const terminals = events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type));
    expect(terminals.map((e) => e.type)).toEqual(["response.failed"]);
    expect(events.at(-1)).toBe(terminals[0]);
    const { code, message } = terminals[0].response.error;
    expect(code).toBe("service_unavailable");
    expect(message).toMatch(/stor/);
    expect(message).not.toMatch(/upstream|Failed to connect/i);
    // The whole answer came in one read, with its end: the caller still gets a response.created first (SDKs expect
    // one), with the id the failure has, and numbers that follow each other.
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.failed"]);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1]);
    expect(events[0].response.id).toBe(events[1].response.id);
    expect(await ledgerRow(res.headers.get("x-request-id"))).toMatchObject({ status: 503, error_code: "service_unavailable" });
  });

  test(`collected, kept, ${name}: 503 with Retry-After and the envelope, never a 500`, async () => {
    failure = err;
    let res: Response;
    try {
      res = await post({ model: "m", input: "hi" });
    } finally {
      failure = null;
    }
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).not.toBeNull();
    const body = await res.json();
    expect(body.error.code).toBe("service_unavailable");
    expect(body.error.message).toMatch(/stor/);
    expect(await ledgerRow(res.headers.get("x-request-id"))).toMatchObject({ status: 503, error_code: "service_unavailable" });
  });
}

test("then kept responses are stored and delivered again", async () => {
  const streamed = await readSseData(await post({ model: "m", input: "hi", stream: true }));
  const done = streamed.at(-1);
  expect(done.type).toBe("response.completed");
  expect(streamed.some((e) => e.type === "response.failed")).toBe(false);
  const kept = await fetch(`${g.url}/v1/responses/${done.response.id}`, { headers: { authorization: `Bearer ${key}` } });
  expect(kept.status).toBe(200);
  expect(JSON.stringify(await kept.json())).toContain("an answer");
  const collected = await post({ model: "m", input: "hi" });
  expect(collected.status).toBe(200);
  await collected.arrayBuffer();
});
