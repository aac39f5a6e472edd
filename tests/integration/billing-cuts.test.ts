/**
 * Every token the upstream produced is billed: a caller that takes the answer and leaves before its end (or is
 * cut) is charged for what was produced until then - the upstream's usage if it came, else an estimate (input from
 * the request's size, output from what was relayed), and the ledger row says it is estimated. Raw JSON replies past
 * the usage scan's first MiB are billed from their tail; impossible usage figures are refused, not credited.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const WORDS = "alpha beta gamma delta epsilon zeta eta theta";
const ECHO = `Echo: ${WORDS}`;
/** created, in_progress, output_item.added, content_part.added, then one delta a word of the echo. */
const AFTER_ALL_DELTAS = 4 + ECHO.split(" ").length;

let upstream: FakeUpstream;
let g: Gantry;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "hang-mid-stream", afterEvents: AFTER_ALL_DELTAS } });
  g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true });
  key = await g.createKey();
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

function post(path: string, body: object, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${g.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads the stream until `enough(text so far)`, then leaves. */
async function readThenLeave(res: Response, abort: AbortController, enough: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!enough(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended first: ${text.slice(-300)}`);
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  return text;
}

/** Ledger columns as numbers on either backend (PostgreSQL returns BIGINT as text and a boolean for `estimated`). */
const LEDGER = "status, error_code, endpoint, request_id, CAST(input_tokens AS DOUBLE PRECISION) AS input_tokens, CAST(output_tokens AS DOUBLE PRECISION) AS output_tokens, CAST(estimated AS INTEGER) AS estimated";

async function ledgerRow(requestId: string): Promise<Record<string, any>> {
  const { value } = await pollUntil(
    async () => (await g.query(`SELECT ${LEDGER} FROM usage_ledger WHERE request_id = $1`, requestId))[0],
    Boolean,
    { what: `the ledger row of ${requestId}` },
  );
  return value;
}

const keyTotals = async () => (await g.query("SELECT CAST(input_tokens AS DOUBLE PRECISION) AS input_tokens, CAST(output_tokens AS DOUBLE PRECISION) AS output_tokens FROM key_usage"))[0] as { input_tokens: number; output_tokens: number };

describe("a caller that takes the answer and leaves before its end", () => {
  test("responses stream: charged for the input and every delta it got, estimated", async () => {
    const before = await keyTotals();
    const abort = new AbortController();
    const res = await post("/v1/responses", { model: "m", input: WORDS, stream: true }, abort.signal);
    const requestId = res.headers.get("x-request-id")!;
    const seen = await readThenLeave(res, abort, (t) => t.includes('theta"'));
    expect(seen).not.toContain("response.completed");
    const row = await ledgerRow(requestId);
    expect(row).toMatchObject({ status: 499, error_code: "client_closed", estimated: 1 });
    // Output: the echo's bytes at about four a token; input: the request sent upstream, likewise.
    expect(row.output_tokens).toBe(Math.ceil(Buffer.byteLength(ECHO) / 4));
    expect(row.input_tokens).toBeGreaterThan(5);
    const after = await keyTotals();
    expect(after.output_tokens - before.output_tokens).toBe(row.output_tokens);
    expect(after.input_tokens - before.input_tokens).toBe(row.input_tokens);
  });

  test("chat stream: the same", async () => {
    const abort = new AbortController();
    const res = await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: WORDS }], stream: true }, abort.signal);
    const requestId = res.headers.get("x-request-id")!;
    await readThenLeave(res, abort, (t) => t.includes('theta"'));
    const row = await ledgerRow(requestId);
    expect(row).toMatchObject({ status: 499, estimated: 1, output_tokens: Math.ceil(Buffer.byteLength(ECHO) / 4) });
  });

  test("collected: a caller that gives up while Gantry collects is charged what was produced", async () => {
    const abort = new AbortController();
    const written = upstream.written;
    const pending = post("/v1/responses", { model: "m", input: WORDS }, abort.signal).catch((e) => e);
    // Every delta reached Gantry (the upstream then goes silent): the caller gives up.
    await pollUntil(() => upstream.written >= written + AFTER_ALL_DELTAS, Boolean, { what: "the upstream to send every delta" });
    const rows = async () => g.query(`SELECT ${LEDGER} FROM usage_ledger WHERE status = 499 AND endpoint = 'responses' ORDER BY id DESC`);
    const count = (await rows()).length;
    abort.abort();
    await pending;
    const { value } = await pollUntil(rows, (r) => r.length > count, { what: "the cut call's ledger row" });
    expect(value[0]).toMatchObject({ estimated: 1, output_tokens: Math.ceil(Buffer.byteLength(ECHO) / 4) });
  });

  test("raw passthrough: one token a delta event it relayed, estimated", async () => {
    const abort = new AbortController();
    const res = await post("/v1/responses", { model: "m", input: WORDS, instructions: "Be brief.", stream: true, store: false }, abort.signal, { "x-upstream-mode": "raw" });
    const requestId = res.headers.get("x-request-id")!;
    await readThenLeave(res, abort, (t) => t.includes('theta"'));
    const row = await ledgerRow(requestId);
    expect(row).toMatchObject({ status: 499, estimated: 1, output_tokens: ECHO.split(" ").length });
  });

  test("an answer that ends normally is charged the upstream's figures, not an estimate", async () => {
    upstream.setScenario({ kind: "text", text: "complete answer", usage: { output_tokens: 42 } });
    try {
      const res = await post("/v1/responses", { model: "m", input: WORDS });
      expect((await res.json()).status).toBe("completed");
      const row = await ledgerRow(res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ status: 200, estimated: 0, output_tokens: 42 });
    } finally {
      upstream.setScenario({ kind: "hang-mid-stream", afterEvents: AFTER_ALL_DELTAS });
    }
  });
});

describe("usage figures from the upstream are checked", () => {
  test("negative or absurd figures are refused and logged; the call is charged an estimate instead", async () => {
    for (const usage of [{ input_tokens: -5000 }, { output_tokens: 1e12 }, { output_tokens: 3.5 }]) {
      upstream.setScenario({ kind: "text", text: "fine", usage });
      try {
        const res = await post("/v1/responses", { model: "m", input: WORDS });
        expect(res.status).toBe(200);
        await res.json();
        const row = await ledgerRow(res.headers.get("x-request-id")!);
        expect(row.estimated).toBe(1);
        expect(row.input_tokens).toBeGreaterThan(0);
        expect(row.output_tokens).toBe(1);
      } finally {
        upstream.setScenario({ kind: "hang-mid-stream", afterEvents: AFTER_ALL_DELTAS });
      }
    }
    const refused = g.logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).includes("upstream usage refused"));
    expect(refused).toHaveLength(3);
  });
});

describe("raw passthrough JSON replies past the first MiB", () => {
  test("are billed from the usage at their end", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    const jsonUpstream = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => Response.json({ id: "resp_big", object: "response", status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: big }] }], usage: { input_tokens: 11, output_tokens: 777, total_tokens: 788 } }),
    });
    const h = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${jsonUpstream.port}/v1` } });
    try {
      const secret = await h.createKey();
      const res = await fetch(`${h.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "x-upstream-mode": "raw" },
        body: JSON.stringify({ model: "m", input: "hi" }),
      });
      expect(res.status).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(3 * 1024 * 1024);
      const [row] = await h.query(`SELECT ${LEDGER} FROM usage_ledger WHERE request_id = $1`, res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ status: 200, input_tokens: 11, output_tokens: 777, estimated: 0 });
    } finally {
      await h.stop();
      jsonUpstream.stop(true);
    }
  });
});
