/**
 * Crash durability: heartbeat and gateway load against a `gantry serve` process (file database, WAL,
 * synchronous=FULL), SIGKILL at a random moment, a restart on the same data dir, and then:
 *
 * - every acknowledged heartbeat (a 200 received) is in the database: its client's row exists, `last_seen`
 *   is at least the moment the heartbeat was sent, and `count` at least the number of acknowledged reports;
 * - every gateway reply received whole has its ledger row (matched by the reply's `x-request-id` header),
 *   since the server commits the row before a reply's last bytes;
 * - `PRAGMA integrity_check` is ok and `PRAGMA foreign_key_check` finds nothing.
 *
 * Repeated CRASHES times on one data dir (so every restart also recovers whatever the previous kill left),
 * about a second of load each. GANTRY_RELIABILITY_SEED replays a run's kill moments.
 */
import { Database } from "bun:sqlite";
import { SqliteClientRepository } from "../../src/store/sqlite/clients";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

const CRASHES = 12;
const HEARTBEAT_WORKERS = 6;
const GATEWAY_WORKERS = 6;
/** The kill lands this long after the load started (uniformly distributed). */
const KILL_AFTER_MS = [150, 1100] as const;
/** Client ids each heartbeat worker rotates through: rows are updated as well as inserted. */
const IDS_PER_WORKER = 4;

let dataDir: string;
let upstream: FakeUpstream;
let apiKey: string;
let server: ServeProcess | null = null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gantry-crash-"));
  // A short stream with a little delay, so kills land before, during and after replies.
  upstream = await startFakeUpstream({ scenario: { kind: "slow", delayMs: 3, deltas: 4, text: "crash test reply" } });
  apiKey = JSON.parse(await gantryCommand(["keys", "create", "--name", "crash", "--json", "--data-dir", dataDir])).key;
});

afterAll(async () => {
  server?.kill("SIGKILL");
  await server?.exited;
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function start(): Promise<ServeProcess> {
  return startServe({ dataDir, upstreamUrl: upstream.url, upstreamKey: "upstream-key-crash", adminToken: "gat-reliability-admin-token-crash-000001" });
}

/** What the callers were told: acknowledged heartbeats per client id, and request ids of replies received whole. */
interface Acks {
  heartbeats: Map<string, { count: number; lastSentAt: number }>;
  replies: Set<string>;
}

/** Workers whose call failed since the set was last cleared: after a kill, the ones that saw the server go. */
const failed = new Set<string>();

async function heartbeatWorker(url: string, w: number, iteration: number, acks: Acks, stopped: () => boolean): Promise<void> {
  for (let n = 0; !stopped(); n++) {
    const clientId = `crash-client-${w}-${n % IDS_PER_WORKER}`;
    const sentAt = Date.now();
    try {
      const res = await fetch(`${url}/api/v1/client/heartbeat`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-app-client-id": clientId },
        body: JSON.stringify({ app: "crash-test", version: `1.${iteration}.${n}`, platform: "linux", arch: "x64" }),
      });
      const body = (await res.json()) as { ok?: boolean };
      if (res.status !== 200 || body.ok !== true) throw new Error(`heartbeat answered ${res.status}: ${JSON.stringify(body)}`);
      const seen = acks.heartbeats.get(clientId) ?? { count: 0, lastSentAt: 0 };
      acks.heartbeats.set(clientId, { count: seen.count + 1, lastSentAt: Math.max(seen.lastSentAt, sentAt) });
    } catch (err) {
      // Refused or cut by the kill: not acknowledged, nothing to check. Anything else is a real failure.
      failed.add(`heartbeat-${w}`);
      if (!stopped() && !isConnectionError(err)) throw err;
      await Bun.sleep(2); // a pause before trying a dead server again, so a worker does not spin
    }
  }
}

async function gatewayWorker(url: string, w: number, iteration: number, acks: Acks, stopped: () => boolean): Promise<void> {
  for (let n = 0; !stopped(); n++) {
    const chat = (w + n) % 2 === 0;
    const stream = n % 3 !== 0;
    const id = `crash-${iteration}-${w}-${n}`;
    try {
      const res = await fetch(`${url}${chat ? "/v1/chat/completions" : "/v1/responses"}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "x-request-id": id },
        body: JSON.stringify(
          chat ? { model: "gpt-5.4-mini", messages: [{ role: "user", content: id }], stream } : { model: "gpt-5.4-mini", input: id, stream },
        ),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`gateway answered ${res.status}: ${text}`);
      // Received whole: the complete JSON document, or the stream up to its end marker.
      const whole = !stream ? (JSON.parse(text), true) : chat ? text.endsWith("data: [DONE]\n\n") : text.includes("event: response.completed");
      if (whole) acks.replies.add(res.headers.get("x-request-id")!);
    } catch (err) {
      failed.add(`gateway-${w}`);
      if (!stopped() && !isConnectionError(err)) throw err;
      await Bun.sleep(2); // a pause before trying a dead server again, so a worker does not spin
    }
  }
}

/** Errors a caller sees when the server dies under it: refused, reset, or a body cut short. */
function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; name?: string; message?: string };
  return (
    /ECONNREFUSED|ECONNRESET|ConnectionRefused|ConnectionClosed|EPIPE|socket|closed|aborted/i.test(`${e?.code} ${e?.name} ${e?.message}`) ||
    err instanceof SyntaxError // a JSON body cut short by the kill
  );
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function verify(acks: Acks): { clients: number; ledgerRows: number } {
  const db = new Database(join(dataDir, "gantry.db"), { strict: true });
  try {
    expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
    // Acknowledged heartbeats are in the journal or already folded; fold what the killed server left.
    new SqliteClientRepository(db).foldNow();

    const clientRow = db.query("SELECT last_seen AS lastSeen, count FROM clients WHERE client_id = ?");
    const lostHeartbeats: unknown[] = [];
    for (const [clientId, ack] of acks.heartbeats) {
      const row = clientRow.get(clientId) as { lastSeen: number; count: number } | null;
      if (!row || row.lastSeen < ack.lastSentAt || row.count < ack.count) lostHeartbeats.push({ clientId, ack, row });
    }
    expect(lostHeartbeats).toEqual([]);

    const ledgerRow = db.query("SELECT status FROM usage_ledger WHERE request_id = ?");
    const lostReplies: unknown[] = [];
    for (const id of acks.replies) {
      const row = ledgerRow.get(id) as { status: number } | null;
      if (row?.status !== 200) lostReplies.push({ id, row });
    }
    expect(lostReplies).toEqual([]);
    return {
      clients: (db.query("SELECT COUNT(*) AS n FROM clients").get() as { n: number }).n,
      ledgerRows: (db.query("SELECT COUNT(*) AS n FROM usage_ledger").get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

test(`SIGKILL at a random moment under load, ${CRASHES} times: every acknowledged write survives the restart`, async () => {
  const seed = Number(process.env.GANTRY_RELIABILITY_SEED ?? Math.floor(Math.random() * 1_000_000));
  const rand = mulberry32(seed);
  const acks: Acks = { heartbeats: new Map(), replies: new Set() };
  const started = performance.now();
  const killMoments: number[] = [];
  let repliesAcked = 0;
  let heartbeatsAcked = 0;

  server = await start();
  for (let iteration = 0; iteration < CRASHES; iteration++) {
    const current = server;
    let stopped = false;
    const before = { replies: acks.replies.size, heartbeats: [...acks.heartbeats.values()].reduce((n, a) => n + a.count, 0) };
    const workers = [
      ...Array.from({ length: HEARTBEAT_WORKERS }, (_, w) => heartbeatWorker(current.url, w, iteration, acks, () => stopped)),
      ...Array.from({ length: GATEWAY_WORKERS }, (_, w) => gatewayWorker(current.url, w, iteration, acks, () => stopped)),
    ];
    const killAfter = Math.round(KILL_AFTER_MS[0] + rand() * (KILL_AFTER_MS[1] - KILL_AFTER_MS[0]));
    killMoments.push(killAfter);
    // A fixed, random moment is the point: the kill lands wherever the load happens to be.
    await Bun.sleep(killAfter);
    failed.clear();
    current.kill("SIGKILL");
    expect(await current.exited).toBeNull();
    // Let every caller see the connection die, then stop them: whatever they were told by now is what counts
    // (and until then, an error that is not a dead connection still fails the test).
    await pollUntil(() => failed.size, (n) => n === workers.length, { what: "every worker to see the server gone" });
    stopped = true;
    await Promise.all(workers);
    repliesAcked += acks.replies.size - before.replies;
    heartbeatsAcked += [...acks.heartbeats.values()].reduce((n, a) => n + a.count, 0) - before.heartbeats;

    // The restart recovers the database (the WAL left by the kill) and serves again.
    server = await start();
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    await ready.text();
    const totals = verify(acks);
    if (iteration === CRASHES - 1) {
      console.log(
        `[crash] seed=${seed} crashes=${CRASHES} killAfterMs=[${killMoments.join(",")}] acknowledged heartbeats=${heartbeatsAcked} ` +
          `(clients ${totals.clients}) replies received whole=${repliesAcked} (ledger rows ${totals.ledgerRows}) ` +
          `all present, integrity ok; elapsed=${Math.round(performance.now() - started)}ms`,
      );
    }
  }
  // The load was real: plenty of acknowledged writes of both kinds to lose.
  expect(heartbeatsAcked).toBeGreaterThan(CRASHES * 50);
  expect(repliesAcked).toBeGreaterThan(CRASHES * 20);
}, 80_000);
