/**
 * Faults of a three-instance deployment (its own PostgreSQL and Redis, so they can be restarted):
 * - an instance killed with SIGKILL gives its concurrency slots back within a lease lifetime, and what it
 *   acknowledged is in the database;
 * - Redis restarted under load: admission answers 503 with the envelope and Retry-After while it is down
 *   (fail closed) and works again by itself;
 * - Redis restarted empty (no persistence, as the docs run it) with calls running and a day's allowance spent:
 *   the running calls still count against the cap, and RPD and quota still refuse (rebuilt from the ledger);
 * - PostgreSQL restarted under load: requests of that moment fail cleanly (an envelope, never a hang or a
 *   crash), then everything works again without restarting Gantry, and nothing acknowledged is lost;
 * - PostgreSQL stopped just as answers end (the upstream holds their terminal events, then lets half go as the
 *   stop begins and half once it is down): every call either succeeded with its ledger row and its kept response,
 *   or failed cleanly (in-band for a stream, with no success before the failure; 503 with Retry-After when
 *   collected), and a collected call meanwhile gets 503 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient, SQL } from "bun";
import OpenAI from "openai";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { postgresUnavailable, startPostgresServer, type PostgresServer } from "../support/postgres";
import { redisUnavailable, startRedisServer, type RedisServer } from "../support/redis";
import { readSseData } from "../support/harness";
import { startCluster, type Cluster } from "./cluster";

const unavailable = postgresUnavailable() ?? redisUnavailable();
const LEASE_SECONDS = 3;

let upstream: FakeUpstream;
let pg: PostgresServer;
let redis: RedisServer;
let cluster: Cluster;
let sql: SQL;
/** What a held reply (input "HOLD") awaits before its terminal event; set by the test that holds them. */
let beforeTerminal: () => Promise<void> = () => Promise.resolve();

interface Outcome {
  status: number;
  code: string | null;
  retryAfter: string | null;
  requestId: string | null;
}

async function ask(i: number, key: string, input = "hello"): Promise<Outcome> {
  try {
    const res = await fetch(`${cluster.instances[i]!.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-test", input }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    let code: string | null = null;
    if (res.status !== 200) code = (JSON.parse(text) as { error: { code: string } }).error.code; // an envelope, or this throws
    return { status: res.status, code, retryAfter: res.headers.get("retry-after"), requestId: res.headers.get("x-request-id") };
  } catch (err) {
    return { status: -1, code: String(err), retryAfter: null, requestId: null };
  }
}

async function beat(i: number, id: string): Promise<number> {
  try {
    const res = await fetch(`${cluster.instances[i]!.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-client-id": id },
      body: JSON.stringify({ app: "myapp", version: "1.0.0", platform: "linux", arch: "x64" }),
      signal: AbortSignal.timeout(20_000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return -1;
  }
}

async function createKey(flags: string[] = []): Promise<{ id: string; key: string }> {
  return JSON.parse(await cluster.cli(["keys", "create", "--name", `k-${crypto.randomUUID()}`, "--json", ...flags]));
}

/** Runs `worker` in `n` loops until `stop()` is called; collects what they returned. */
function load<T>(n: number, worker: (i: number, round: number) => Promise<T>) {
  let running = true;
  const results: T[] = [];
  const loops = Array.from({ length: n }, async (_, i) => {
    for (let round = 0; running; round++) results.push(await worker(i, round));
  });
  return {
    results,
    async stop() {
      running = false;
      await Promise.all(loops);
      return results;
    },
  };
}

if (unavailable) {
  console.warn(`cluster fault tests skipped: ${unavailable}`);
  test.skip(`cluster fault tests: ${unavailable}`, () => {});
} else {
  beforeAll(async () => {
    upstream = await startFakeUpstream({
      scenario: (body) => {
        const input = JSON.stringify(body?.input ?? "");
        if (input.includes("SLOW")) return { kind: "slow", delayMs: 200, deltas: 100, text: "a long reply" };
        if (input.includes("HOLD")) return { kind: "text", text: "a held reply", deltas: 3, beforeTerminal: () => beforeTerminal() };
        return { kind: "text", text: "a reply", deltas: 3 };
      },
    });
    [pg, redis] = await Promise.all([startPostgresServer(), startRedisServer()]);
    const databaseUrl = await pg.createDatabase();
    sql = new SQL({ url: databaseUrl, max: 2 });
    cluster = await startCluster({ databaseUrl, redisUrl: redis.url, upstreamUrl: upstream.url, args: ["--redis-lease-seconds", String(LEASE_SECONDS)] });
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    await sql?.close();
    await Promise.all([pg?.stop(), redis?.stop()]);
    await upstream?.close();
  });

  describe("faults", () => {
    test("an instance killed with SIGKILL gives its slots back within a lease lifetime; what it acknowledged is kept", async () => {
      const { key } = await createKey(["--concurrency", "2"]);
      const victim = cluster.instances[2]!;
      // Two long streams on the victim hold both slots.
      const streams = [0, 1].map(() =>
        fetch(`${victim.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-test", input: "SLOW", stream: true }),
        }),
      );
      const held = await Promise.all(streams);
      for (const s of held) expect(s.status).toBe(200);
      // Each body is held by a reader kept to the end of the test: a Response nobody references may be collected
      // mid-test, which closes its connection, and the caller going away frees the slot it held.
      const readers = held.map((s) => s.body!.getReader());
      const acked: string[] = [];
      for (let i = 0; i < 20; i++) if ((await beat(2, `victim-client-${i}`)) === 200) acked.push(`victim-client-${i}`);
      expect(acked).toHaveLength(20);
      expect((await ask(0, key)).code).toBe("concurrent_limit");

      victim.kill("SIGKILL");
      await victim.exited;
      cluster.instances.splice(2, 1);
      const killedAt = performance.now();
      // Still held right after the kill (the leases have not expired)...
      expect((await ask(0, key)).code).toBe("concurrent_limit");
      // ...and free again once they have: within a lease lifetime (plus a margin for a loaded machine).
      await pollUntil(() => ask(0, key), (r) => r.status === 200, { timeoutMs: 20_000, stepMs: 100, what: "the killed instance's slots back" });
      const backAfterMs = performance.now() - killedAt;
      expect(backAfterMs).toBeLessThan(LEASE_SECONDS * 1000 + 2500);

      const [row] = await sql`SELECT count(*)::int AS n FROM clients WHERE client_id LIKE 'victim-client-%'`;
      expect(row.n).toBe(20);
      for (const r of readers) await r.cancel().catch(() => {});
      await cluster.add();
    }, 60_000);

    test("Redis restarted under load: 503 with the envelope and Retry-After while it is down, then admission by itself", async () => {
      const { key } = await createKey(["--rpm", "100000"]);
      const traffic = load(6, (i) => ask(i % 3, key));
      await pollUntil(() => traffic.results.filter((r) => r.status === 200).length, (n) => n >= 30, { timeoutMs: 20_000, what: "load under way" });
      await redis.down();
      const downAt = traffic.results.length;
      await pollUntil(() => traffic.results.slice(downAt).filter((r) => r.status === 503).length, (n) => n >= 10, { timeoutMs: 20_000, what: "refusals while Redis is down" });
      await redis.up();
      const upAt = traffic.results.length;
      // Every instance admits again, by itself.
      await pollUntil(
        () => Promise.all([0, 1, 2].map((i) => ask(i, key))),
        (rs) => rs.every((r) => r.status === 200),
        { timeoutMs: 20_000, stepMs: 100, what: "every instance admitting again" },
      );
      const results = await traffic.stop();
      expect(results.slice(upAt).some((r) => r.status === 200)).toBe(true);
      for (const r of results) {
        expect([200, 503]).toContain(r.status);
        if (r.status === 503) {
          expect(r.code).toBe("service_unavailable");
          expect(r.retryAfter).toBe("1");
        }
      }
    }, 90_000);

    test("Redis restarted EMPTY with calls running and a day's allowance spent: the cap still holds, RPD and quota still refuse", async () => {
      const { key: capped } = await createKey(["--concurrency", "2"]);
      const { key: daily } = await createKey(["--rpd", "3"]);
      const { key: quoted } = await createKey(["--quota-tokens", "30"]);
      // The CLI that made them runs no limiter on Redis (it would join the instances' registry for a lease, and be
      // waited for after the restart): a command loads none of its scripts.
      const redisClient = new RedisClient(redis.url);
      const scriptLoads = async () => Number(/cmdstat_script\|load:calls=(\d+)/.exec((await redisClient.send("INFO", ["commandstats"])) as string)?.[1] ?? -1);
      const loadsBefore = await scriptLoads();
      await cluster.cli(["keys", "list"]);
      expect(await scriptLoads()).toBe(loadsBefore);
      redisClient.close();
      // Two long streams on instance 1 hold the capped key's slots through the restart.
      const abort = new AbortController();
      const streams = await Promise.all(
        [0, 1].map(() =>
          fetch(`${cluster.instances[1]!.url}/v1/responses`, {
            method: "POST",
            headers: { authorization: `Bearer ${capped}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "gpt-test", input: "SLOW", stream: true }),
            signal: abort.signal,
          }),
        ),
      );
      try {
        for (const s of streams) expect(s.status).toBe(200);
        expect((await ask(0, capped)).code).toBe("concurrent_limit");
        // The day's three requests, on three instances; then the quota, spent by whole calls.
        for (const i of [0, 1, 2]) expect((await ask(i, daily)).status).toBe(200);
        expect((await ask(0, daily)).code).toBe("rate_limit_rpd");
        const spent = await pollUntil(() => ask(2, quoted), (r) => r.code === "quota_exceeded", { timeoutMs: 10_000, stepMs: 0, what: "the quota spent" });
        expect(spent.value.status).toBe(429);

        // As the docs run it: no persistence, so it comes back with nothing.
        await redis.down();
        await redis.up();
        const afterRestart = (i: number, key: string) =>
          pollUntil(() => ask(i, key), (r) => r.status !== 503, { timeoutMs: 20_000, stepMs: 50, what: "an answer from the limiter again" }).then((p) => p.value);
        // The first answers that are not "unavailable" already count the running calls, the day and the quota.
        expect((await afterRestart(0, capped)).code).toBe("concurrent_limit");
        expect((await afterRestart(2, capped)).code).toBe("concurrent_limit");
        expect((await afterRestart(2, daily)).code).toBe("rate_limit_rpd");
        expect((await afterRestart(1, daily)).code).toBe("rate_limit_rpd");
        expect((await afterRestart(0, quoted)).code).toBe("quota_exceeded");
      } finally {
        abort.abort();
        await Promise.all(streams.map((s) => s.body?.cancel().catch(() => {})));
      }
      // The streams' slots come back when they end: the capped key is admitted again.
      await pollUntil(() => ask(0, capped), (r) => r.status === 200, { timeoutMs: 20_000, stepMs: 100, what: "the capped key admitted once its streams ended" });
    }, 90_000);

    test("PostgreSQL restarted under load: clean failures meanwhile, then everything resumes; nothing acknowledged is lost", async () => {
      const { id, key } = await createKey();
      const gateway = load(4, (i) => ask(i % 3, key));
      const acks = new Map<string, number>();
      const beats = load(3, async (i, round) => {
        const client = `pg-restart-${i}-${round % 5}`;
        const status = await beat(i, client);
        if (status === 200) acks.set(client, (acks.get(client) ?? 0) + 1);
        return status;
      });
      await pollUntil(() => gateway.results.filter((r) => r.status === 200).length, (n) => n >= 20, { timeoutMs: 20_000, what: "load under way" });
      await pg.restart();
      // Everything resumes without restarting Gantry: gateway calls, heartbeats and admin writes on every instance.
      await pollUntil(
        async () => [...(await Promise.all([0, 1, 2].map((i) => ask(i, key)))).map((r) => r.status), ...(await Promise.all([0, 1, 2].map((i) => beat(i, "after-restart"))))],
        (ss) => ss.every((s) => s === 200),
        { timeoutMs: 30_000, stepMs: 100, what: "every instance serving again" },
      );
      const created = await cluster.admin(1, "/admin/api/keys", { method: "POST", body: JSON.stringify({ name: `after-${crypto.randomUUID()}` }) });
      expect(created.status).toBe(201);
      const [calls, heartbeats] = await Promise.all([gateway.stop(), beats.stop()]);
      // Clean failures only: a reply or an envelope, never a hang, a dropped connection or a stack trace.
      for (const r of calls) {
        expect([200, 503]).toContain(r.status);
        if (r.status === 503) expect(r.retryAfter).not.toBeNull();
      }
      for (const s of heartbeats) expect([200, 500, 503]).toContain(s);
      // Every reply received whole has its ledger row, once.
      const ok = calls.filter((r) => r.status === 200).map((r) => r.requestId!);
      const rows = await sql`SELECT request_id FROM usage_ledger WHERE key_id = ${id}`;
      const ids = rows.map((r: { request_id: string }) => r.request_id);
      for (const rid of ok) expect(ids).toContain(rid);
      expect(new Set(ids).size).toBe(ids.length);
      // Every acknowledged heartbeat's client is there, with at least as many reports as were acknowledged.
      for (const [client, n] of acks) {
        const [row] = await sql`SELECT count FROM clients WHERE client_id = ${client}`;
        expect(row).toBeDefined();
        expect(Number(row.count)).toBeGreaterThanOrEqual(n);
      }
    }, 120_000);

    test("PostgreSQL restarted while the instances are idle: the first request on each afterwards succeeds", async () => {
      const { key } = await createKey();
      // Every instance has used its pool, so idle connections are waiting in it when the server goes away.
      for (const i of [0, 1, 2]) expect((await ask(i, key)).status).toBe(200);
      await pg.restart();
      await checkAllServing(key);
      // The change feed listens again after the restart: a key disabled now is refused everywhere (a few seconds
      // at most, however long Bun's listener takes to reconnect: a re-subscription reloads every cache).
      const { id, key: other } = await createKey();
      for (const i of [0, 1, 2]) expect((await ask(i, other)).status).toBe(200);
      const res = await cluster.admin(2, `/admin/api/keys/${id}`, { method: "PATCH", body: JSON.stringify({ status: "disabled" }) });
      expect(res.status).toBe(200);
      await pollUntil(
        () => Promise.all([0, 1, 2].map((i) => ask(i, other))),
        (rs) => rs.every((r) => r.status === 401 || r.status === 403),
        { timeoutMs: 10_000, stepMs: 50, what: "the disabled key refused on every instance after the restart" },
      );
    }, 60_000);

    test("PostgreSQL stopped as answers end: each call succeeds with its ledger row and kept response, or fails cleanly; never completed then failed", async () => {
      const { id, key } = await createKey();
      // Half the replies end as the database is being stopped (their commits race the stop, as in the field), half
      // once it is down.
      const stopping = Promise.withResolvers<void>();
      const stopped = Promise.withResolvers<void>();
      let held = 0;
      beforeTerminal = () => (++held % 2 === 0 ? stopping.promise : stopped.promise);
      const openBefore = upstream.open;
      let down = false;
      const results: HeldResult[] = [];
      let sdk: SdkResult;
      try {
        const calls: Array<Promise<HeldResult>> = [];
        for (const i of [0, 1, 2]) for (const kind of HELD_KINDS) calls.push(heldCall(i, key, kind));
        const sdkCall = sdkStream(1, key);
        // Every answer has been sent but its terminal event.
        await pollUntil(() => held, (n) => n === calls.length + 1, { timeoutMs: 20_000, what: "every held reply waiting for its end" });
        stopping.resolve();
        // Their terminal events sent (their upstream streams over): the stop begins while they are being committed.
        const laterHalf = held - Math.floor(held / 2);
        await pollUntil(() => upstream.open, (n) => n <= openBefore + laterHalf, { timeoutMs: 20_000, stepMs: 1, what: "the first half's ends sent" });
        down = true;
        await pg.down();
        stopped.resolve();
        results.push(...(await Promise.all(calls)));
        sdk = await sdkCall;
        // A collected call while the database is down: 503 with Retry-After, never a 500.
        for (const i of [0, 1, 2]) {
          const r = await ask(i, key);
          expect(r).toMatchObject({ status: 503, code: "service_unavailable" });
          expect(r.retryAfter).not.toBeNull();
        }
      } finally {
        beforeTerminal = () => Promise.resolve();
        stopping.resolve();
        stopped.resolve();
        if (down) await pg.up();
      }
      await pollUntil(() => Promise.all([0, 1, 2].map((i) => ask(i, key))), (rs) => rs.every((r) => r.status === 200), {
        timeoutMs: 30_000,
        stepMs: 100,
        what: "every instance serving again",
      });

      const rows = await sql`SELECT request_id, status FROM usage_ledger WHERE key_id = ${id}`;
      const billed = new Map(rows.map((r: { request_id: string; status: number }) => [r.request_id, Number(r.status)]));
      let failures = 0;
      for (const r of results) {
        const what = `${r.kind} on instance ${r.instance}: ${JSON.stringify(r.body).slice(0, 600)}`;
        if (r.succeeded) {
          // A success: billed, and a kept response can be fetched.
          expect(billed.get(r.requestId!), what).toBe(200);
          if (r.keptId) {
            const kept = await fetch(`${cluster.instances[r.instance]!.url}/v1/responses/${r.keptId}`, { headers: { authorization: `Bearer ${key}` } });
            expect(kept.status, what).toBe(200);
            await kept.arrayBuffer();
          }
        } else {
          failures++;
          expect(r.error, what).toMatchObject({ code: "service_unavailable" });
          // The failure names what failed: storage, not the upstream (which answered well).
          expect(r.error!.message, what).not.toMatch(/upstream|Failed to connect/i);
          if (!r.streamed) expect(r.retryAfter, what).not.toBeNull();
        }
      }
      // Those that ended once it was down failed; those ending as it stopped went either way.
      expect(failures).toBeGreaterThanOrEqual(Math.floor(results.length / 2));
      console.log(`PostgreSQL stopped as answers ended: ${results.length - failures} succeeded, ${failures} failed cleanly`);
      // The OpenAI SDK: a response that failed is one whose events never said completed.
      if (sdk!.status === "completed") expect(sdk!.types.filter((t) => t === "response.failed")).toEqual([]);
      else {
        expect(sdk!.status).toBe("failed");
        expect(sdk!.types).not.toContain("response.completed");
      }
    }, 120_000);

    test("every pooled connection cut while idle (a failover, a proxy's idle timeout): the next requests succeed", async () => {
      const { key } = await createKey();
      for (const i of [0, 1, 2]) expect((await ask(i, key)).status).toBe(200);
      const cut = await sql`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      expect(cut[0].n).toBeGreaterThan(0);
      await checkAllServing(key);
    }, 60_000);
  });
}

async function checkAllServing(key: string): Promise<void> {
      for (const i of [0, 1, 2]) {
        expect(await beat(i, `idle-restart-${i}`)).toBe(200);
        expect((await ask(i, key)).status).toBe(200);
        const created = await cluster.admin(i, "/admin/api/keys", { method: "POST", body: JSON.stringify({ name: `idle-${crypto.randomUUID()}` }) });
        expect(created.status).toBe(201);
        expect((await cluster.admin(i, "/admin/api/stats/clients")).status).toBe(200);
        expect((await fetch(`${cluster.instances[i]!.url}/api/v1/latest`)).status).not.toBe(500);
      }
}

const HELD_KINDS = ["responses-stream-kept", "responses-stream-unkept", "responses-collected-kept", "chat-stream", "chat-collected"] as const;
type HeldKind = (typeof HELD_KINDS)[number];

interface HeldResult {
  kind: HeldKind;
  instance: number;
  streamed: boolean;
  requestId: string | null;
  retryAfter: string | null;
  /** The answer ended as a success (and only as one). */
  succeeded: boolean;
  /** The failure the caller was told, when it did not succeed. */
  error: { code: string; message: string } | null;
  /** The id of a kept response that succeeded. */
  keptId: string | null;
  body: unknown;
}

/** One call whose reply the upstream holds before its terminal event; what the caller got, checked for shape. */
async function heldCall(i: number, key: string, kind: HeldKind): Promise<HeldResult> {
  const chat = kind.startsWith("chat");
  const streamed = kind.includes("stream");
  const body = chat
    ? { model: "gpt-test", messages: [{ role: "user", content: "HOLD" }], stream: streamed }
    : { model: "gpt-test", input: "HOLD", stream: streamed, ...(kind.endsWith("unkept") ? { store: false } : {}) };
  const res = await fetch(`${cluster.instances[i]!.url}/v1/${chat ? "chat/completions" : "responses"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const base = { kind, instance: i, streamed, requestId: res.headers.get("x-request-id"), retryAfter: res.headers.get("retry-after"), keptId: null };
  if (!streamed) {
    const json = (await res.json()) as any;
    if (res.status === 200) return { ...base, succeeded: true, error: null, keptId: kind.endsWith("kept") ? json.id : null, body: json };
    expect(res.status).toBe(503);
    return { ...base, succeeded: false, error: json.error, body: json };
  }
  expect(res.status).toBe(200);
  const events = await readSseData(res);
  if (chat) {
    // A chat stream ends with [DONE], after either a finished choice or an error frame, never both.
    expect(events.at(-1)).toBe("[DONE]");
    const finished = events.some((c) => c !== "[DONE]" && c.choices?.some((x: any) => x.finish_reason !== null && x.finish_reason !== undefined));
    const error = events.find((c) => c !== "[DONE]" && c.error)?.error ?? null;
    expect(finished && error !== null).toBe(false);
    return { ...base, succeeded: finished && error === null, error, body: events };
  }
  // Exactly one terminal event, the last: a success is never followed by a failure.
  const terminals = events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type));
  expect(terminals.map((e) => e.type)).toHaveLength(1);
  expect(events.at(-1)).toBe(terminals[0]);
  const end = terminals[0];
  const ok = end.type === "response.completed";
  return { ...base, succeeded: ok, error: ok ? null : end.response.error, keptId: ok && kind.endsWith("-kept") ? end.response.id : null, body: events };
}

interface SdkResult {
  status: string | undefined;
  types: string[];
}

/** A kept stream read with the OpenAI SDK, as an application would: its events, then `finalResponse()`. */
async function sdkStream(i: number, key: string): Promise<SdkResult> {
  const client = new OpenAI({ baseURL: `${cluster.instances[i]!.url}/v1`, apiKey: key, maxRetries: 0, timeout: 60_000 });
  const stream = client.responses.stream({ model: "gpt-test", input: "HOLD (sdk)" });
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  return { status: (await stream.finalResponse()).status, types };
}
