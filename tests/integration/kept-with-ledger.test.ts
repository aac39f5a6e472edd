/**
 * SQLite commits a kept response and its call's ledger row in one transaction (issue 32, cheaper keeping): the put
 * and the row are queued in the same turn, whichever group commit runs first writes both. When that transaction
 * fails, the two are written apart as before (the responses, then the rows), and a row whose response could not be
 * written records that failure, which is what its caller is told.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { openSqliteStores, type SqliteStores } from "../../src/store/sqlite/stores";
import type { StoredResponse } from "../../src/gateway/responses/stored-response-repository";
import type { LedgerEntry } from "../../src/gateway/usage/ledger-repository";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, type Gantry } from "../support/harness";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();
let n = 0;

function kept(model = "m"): StoredResponse {
  const id = `resp_${Date.now().toString(16).padStart(12, "0")}${(++n).toString(16).padStart(20, "0")}`;
  return {
    id,
    keyId: "k1",
    previousId: null,
    model,
    account: null,
    createdAt: 1_000 + n,
    expiresAt: 10_000_000,
    response: { id, object: "response", status: "completed", output: [] },
    inputItems: [],
  };
}

function row(requestId: string, linked?: { failed: (err: unknown) => void; status: () => number }): LedgerEntry {
  const entry: LedgerEntry = {
    ts: 1_000,
    requestId,
    keyId: null,
    model: "m",
    endpoint: "responses",
    status: 200,
    errorCode: null,
    inputTokens: 1,
    outputTokens: 2,
    reasoningTokens: 0,
    cachedTokens: 0,
    cost: 0,
    durationMs: 1,
    upstreamTtfbMs: null,
  };
  if (linked) entry.kept = { failed: linked.failed, outcome: () => ({ status: linked.status(), errorCode: linked.status() === 200 ? null : "kept_failed" }) };
  return entry;
}

/** The separate commits of kept responses (written alone they relax the sync for their own commit). */
function countSeparateCommits(db: Database): { count: number } {
  const seen = { count: 0 };
  const exec = db.exec.bind(db);
  db.exec = ((sql: string, ...rest: unknown[]) => {
    if (sql === "PRAGMA synchronous = NORMAL") seen.count++;
    return (exec as (...a: unknown[]) => unknown)(sql, ...rest);
  }) as typeof db.exec;
  return seen;
}

const statusOf = (stores: SqliteStores, requestId: string) =>
  (stores.db.query("SELECT status, error_code FROM usage_ledger WHERE request_id = ?").get(requestId) as { status: number; error_code: string | null } | null);

test("a put and the rows queued in the same turn share one transaction, whichever is queued first", async () => {
  const stores = openSqliteStores({ path: join(tempDir("kept-ledger"), "gantry.db") });
  try {
    const separate = countSeparateCommits(stores.db);
    for (const putFirst of [true, false]) {
      const r = kept();
      const entry = row(`req-${r.id}`);
      const both = putFirst ? [stores.responses.put(r), stores.ledger.record(entry)] : [stores.ledger.record(entry), stores.responses.put(r)];
      await Promise.all(both);
      expect(await stores.responses.get("k1", r.id, 2_000)).not.toBeNull();
      expect(statusOf(stores, entry.requestId)?.status).toBe(200);
    }
    expect(separate.count).toBe(0);
    // A put with no row waiting is committed by itself, as before.
    const alone = kept();
    await stores.responses.put(alone);
    expect(await stores.responses.get("k1", alone.id, 2_000)).not.toBeNull();
    expect(separate.count).toBe(1);
  } finally {
    await stores.close();
  }
});

test("the shared transaction fails: written apart; the failed put rejects and its row records the failure, other rows land", async () => {
  const stores = openSqliteStores({ path: join(tempDir("kept-ledger"), "gantry.db") });
  try {
    stores.db.exec(`CREATE TRIGGER refuse_keep BEFORE INSERT ON stored_responses WHEN NEW.model = 'refused'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    let failedWith: unknown = null;
    const r = kept("refused");
    const linked = row("req-refused", { failed: (err) => (failedWith = err), status: () => (failedWith ? 503 : 200) });
    const other = row("req-other");
    const put = stores.responses.put(r);
    const recorded = Promise.all([stores.ledger.record(linked), stores.ledger.record(other)]);
    await expect(put).rejects.toThrow(/refused by the test/);
    await recorded;
    expect(String(failedWith)).toContain("refused by the test");
    expect(statusOf(stores, "req-refused")).toEqual({ status: 503, error_code: "kept_failed" });
    expect(statusOf(stores, "req-other")).toEqual({ status: 200, error_code: null });
    expect(await stores.responses.get("k1", r.id, 2_000)).toBeNull();
    // Then it works again.
    const ok = kept();
    const okRow = row(`req-${ok.id}`, { failed: () => {}, status: () => 200 });
    await Promise.all([stores.responses.put(ok), stores.ledger.record(okRow)]);
    expect(await stores.responses.get("k1", ok.id, 2_000)).not.toBeNull();
    expect(statusOf(stores, okRow.requestId)?.status).toBe(200);
  } finally {
    await stores.close();
  }
});

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "an answer", deltas: 3 } });
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
  key = await g.createKey();
});
afterAll(async () => {
  await g?.stop();
  await upstream?.close();
});

const post = (body: object) =>
  fetch(`${g.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

test("through the gateway: a response the database refuses inside the shared transaction fails the call, and its row says so", async () => {
  if (!g.deps.keptWithLedger) return; // a shared backend commits them apart (tests/integration/keep-failure.test.ts)
  await g.query(`CREATE TRIGGER refuse_keep BEFORE INSERT ON stored_responses WHEN NEW.model = 'refused-model'
    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  try {
    const res = await post({ model: "refused-model", input: "hi", stream: true });
    const events = await readSseData(res);
    const terminals = events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type));
    expect(terminals.map((e) => e.type)).toEqual(["response.failed"]);
    const [ledger] = await g.query("SELECT status, error_code FROM usage_ledger WHERE request_id = $1", res.headers.get("x-request-id"));
    // What the caller was told is what the ledger says; never a success.
    expect(ledger!.status).toBeGreaterThanOrEqual(500);
    expect(ledger!.error_code).toBe(terminals[0].response.error.code);
    // Concurrent kept calls of other models are unaffected once the failed batch is behind them.
    const fine = await Promise.all(Array.from({ length: 8 }, () => post({ model: "m", input: "hi", stream: true }).then(readSseData)));
    for (const evs of fine) expect(evs.at(-1).type).toBe("response.completed");
    for (const evs of fine) {
      const got = await fetch(`${g.url}/v1/responses/${evs.at(-1).response.id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(got.status).toBe(200);
      await got.arrayBuffer();
    }
  } finally {
    await g.query("DROP TRIGGER refuse_keep");
  }
});
