/**
 * Graceful shutdown of a `gantry serve` process on SIGTERM: it stops accepting connections at once, lets
 * in-flight streams finish up to the grace period (--shutdown-grace-seconds), cuts what is still running
 * then, flushes pending writes, closes the database and exits 0.
 */
import { Database } from "bun:sqlite";
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

let upstream: FakeUpstream;
const dirs: string[] = [];
let server: ServeProcess | null = null;

beforeAll(async () => {
  // The input picks the length: "short" streams for about a second, "long" for ten.
  upstream = await startFakeUpstream({
    scenario: (body) =>
      JSON.stringify(body ?? {}).includes("please stream long")
        ? { kind: "slow", delayMs: 500, deltas: 20, text: "a long reply cut by the shutdown grace period of the server" }
        : { kind: "slow", delayMs: 100, deltas: 10, text: "a short reply that finishes within the grace period" },
  });
});

afterEach(async () => {
  server?.kill("SIGKILL");
  await server?.exited;
  server = null;
});

afterAll(async () => {
  await upstream?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serveWithGrace(graceSeconds: number): Promise<{ dataDir: string; key: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "gantry-shutdown-"));
  dirs.push(dataDir);
  const key = JSON.parse(await gantryCommand(["keys", "create", "--name", "shutdown", "--json", "--data-dir", dataDir])).key;
  server = await startServe({
    dataDir,
    upstreamUrl: upstream.url,
    upstreamKey: "upstream-key-shutdown",
    adminToken: "gat-reliability-admin-token-shutdown-0001",
    args: ["--shutdown-grace-seconds", String(graceSeconds)],
  });
  return { dataDir, key };
}

function startStream(key: string, input: string, id: string, options: { chat?: boolean; stream?: boolean } = {}) {
  const stream = options.stream ?? true;
  return fetch(`${server!.url}${options.chat ? "/v1/chat/completions" : "/v1/responses"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": id },
    body: JSON.stringify(
      options.chat ? { model: "gpt-5.4-mini", messages: [{ role: "user", content: input }], stream } : { model: "gpt-5.4-mini", input, stream },
    ),
  });
}

/** Reads a stream to its end; returns the text and whether the connection failed instead of ending. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, first: string): Promise<{ text: string; broken: boolean }> {
  const decoder = new TextDecoder();
  let text = first;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, broken: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, broken: true };
  }
}

/** A brand-new TCP connection (never a pooled one): resolves "refused" or "accepted". */
function tryConnect(port: number): Promise<"refused" | "accepted"> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("accepted");
    });
    socket.once("error", () => resolve("refused"));
  });
}

function ledgerRow(dataDir: string, requestId: string): { status: number; error_code: string | null } | null {
  const db = new Database(join(dataDir, "gantry.db"), { readonly: true });
  try {
    return db.query("SELECT status, error_code FROM usage_ledger WHERE request_id = ?").get(requestId) as never;
  } finally {
    db.close();
  }
}

function allLedgerRows(dataDir: string): Array<{ request_id: string; status: number; error_code: string | null }> {
  const db = new Database(join(dataDir, "gantry.db"), { readonly: true });
  try {
    return db.query("SELECT request_id, status, error_code FROM usage_ledger").all() as never;
  } finally {
    db.close();
  }
}

test("a stream in flight when SIGTERM arrives finishes normally; new connections are refused; exit 0; its ledger row is there", async () => {
  const grace = 5;
  const { dataDir, key } = await serveWithGrace(grace);
  const res = await startStream(key, "short", "shutdown-finishes");
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);

  // Heartbeats in flight as the signal arrives: each one acknowledged must be in the database after exit.
  // (Sent over connections opened beforehand, so most reach the server before the listener closes.)
  await Promise.all(
    Array.from({ length: 20 }, () => fetch(`${server!.url}/healthz`).then((r) => r.arrayBuffer())),
  );
  const heartbeats = Array.from({ length: 20 }, (_, i) =>
    fetch(`${server!.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-client-id": `shutdown-client-${i}` },
      body: JSON.stringify({ app: "shutdown-test", version: "1.0.0" }),
    }).then(
      async (r) => ({ id: `shutdown-client-${i}`, acked: r.status === 200 && ((await r.json()) as { ok?: boolean }).ok === true }),
      () => ({ id: `shutdown-client-${i}`, acked: false }),
    ),
  );
  // A fixed moment on purpose: the signal must land while these heartbeats are in flight, not after them.
  await Bun.sleep(2);
  const signalledAt = performance.now();
  server!.kill("SIGTERM");
  // The listener closes at once: a new connection is refused while the stream is still running.
  await pollUntil(() => tryConnect(server!.port), (r) => r === "refused", { stepMs: 20, what: "new connections to be refused" });
  expect(upstream.open).toBe(1);

  const { text, broken } = await drain(reader, first);
  expect(broken).toBe(false);
  expect(text).toContain("event: response.completed");
  const code = await server!.exited;
  const exitedAfterMs = performance.now() - signalledAt;
  expect(code).toBe(0);
  // It waited for the stream, not for the whole grace period.
  expect(exitedAfterMs).toBeLessThan(grace * 1000);
  const output = server!.output();
  expect(output).toContain('"msg":"stopping"');
  expect(output).toContain('"msg":"stopped"');

  // The database was closed cleanly: the WAL was checkpointed into it and removed, nothing left to recover.
  // (Checked before this test opens the file itself: a read-only connection leaves a WAL file behind.)
  expect(await Bun.file(join(dataDir, "gantry.db-wal")).exists()).toBe(false);
  // Found by the reply's x-request-id: the ledger's id is Gantry's own, never the caller's X-Request-Id.
  expect(ledgerRow(dataDir, res.headers.get("x-request-id")!)).toEqual({ status: 200, error_code: null });
  const acked = (await Promise.all(heartbeats)).filter((h) => h.acked).map((h) => h.id);
  const db = new Database(join(dataDir, "gantry.db"), { readonly: true });
  try {
    const stored = new Set((db.query("SELECT client_id AS id FROM clients").all() as Array<{ id: string }>).map((r) => r.id));
    expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  } finally {
    db.close();
  }
  console.log(`[shutdown] finishing stream: exit 0 after ${Math.round(exitedAfterMs)} ms (grace ${grace} s); heartbeats acknowledged around the signal: ${acked.length}/20, all stored`);
});

test("calls longer than the grace period are cut at the grace period and recorded; the process still exits 0 in time", async () => {
  const grace = 1;
  const { dataDir, key } = await serveWithGrace(grace);
  // Both endpoints: streams (headers sent, cut mid-body) and stream:false calls (still waiting for the upstream).
  const streams = Array.from({ length: 6 }, (_, i) => ({ id: `shutdown-cut-stream-${i}`, chat: i % 2 === 1 }));
  const waiting = Array.from({ length: 4 }, (_, i) => ({ id: `shutdown-cut-waiting-${i}`, chat: i % 2 === 1 }));
  const readers = await Promise.all(
    streams.map(async ({ id, chat }) => {
      const res = await startStream(key, "please stream long", id, { chat });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      return { reader, first: new TextDecoder().decode((await reader.read()).value) };
    }),
  );
  const pending = waiting.map(({ id, chat }) =>
    startStream(key, "please stream long", id, { chat, stream: false }).then(
      (res) => res.status,
      () => "cut" as const,
    ),
  );
  await pollUntil(() => upstream.open, (n) => n === streams.length + waiting.length, { what: "every call to reach the upstream" });

  const signalledAt = performance.now();
  server!.kill("SIGTERM");
  const [texts, code, waited] = await Promise.all([Promise.all(readers.map((r) => drain(r.reader, r.first))), server!.exited, Promise.all(pending)]);
  const exitedAfterMs = performance.now() - signalledAt;
  expect(code).toBe(0);
  expect(exitedAfterMs).toBeGreaterThanOrEqual(grace * 1000 - 50);
  expect(exitedAfterMs).toBeLessThan(grace * 1000 + 1500);
  // Cut, not finished: a caller never sees a completion it did not get.
  for (const { text } of texts) {
    expect(text).not.toContain("event: response.completed");
    expect(text).not.toContain("[DONE]");
  }
  expect(waited.filter((s) => s === 200)).toEqual([]);
  // The upstream requests went away with them.
  await pollUntil(() => upstream.open, (n) => n === 0, { what: "the upstream requests to go" });
  // Every cut call is on record, as not completed: the ledger writer closed only after the cut calls settled. (This
  // server's ledger holds these calls only; a call cut before its headers never learnt its id, so they are counted.)
  const rows = allLedgerRows(dataDir).map((row) => ({ id: row.request_id, row }));
  expect(rows.length).toBe(streams.length + waiting.length);
  expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  expect(rows.filter(({ row }) => row === null || row.status === 200)).toEqual([]);
  console.log(
    `[shutdown] ${rows.length} cut calls: exit 0 after ${Math.round(exitedAfterMs)} ms (grace ${grace} s), ` +
      `ledger statuses ${[...new Set(rows.map(({ row }) => `${row!.status} ${row!.error_code}`))].join(", ")}; non-streamed callers got ${[...new Set(waited)].join(", ")}`,
  );
});

test("SIGTERM on an idle server (keep-alive connections open) exits 0 at once", async () => {
  const { key } = await serveWithGrace(10);
  // A pooled keep-alive connection stays open after this reply.
  const res = await fetch(`${server!.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  await res.text();
  const signalledAt = performance.now();
  server!.kill("SIGTERM");
  expect(await server!.exited).toBe(0);
  expect(performance.now() - signalledAt).toBeLessThan(2000);
});
