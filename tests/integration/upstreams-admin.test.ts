/**
 * The upstream accounts as operators reach them over HTTP: GET /admin/api/upstreams, the test, disable and enable
 * actions (behind the admin guard, CSRF for a browser session), and the per-account series in /metrics, on a real
 * server with a fake upstream; a pool of one whose account an operator disabled refuses calls (its automatic states
 * do not); and two servers on one Redis seeing the same state, the second refusing calls within a second of the
 * first's disable.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { redisUnavailable, redisUrl } from "../support/redis";

describe("/admin/api/upstreams", () => {
  let upstream: FakeUpstream;
  let g: Gantry;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ apiKey: "upstream-secret-key" });
    g = await startGantry({ config: { upstreamUrl: upstream.url } });
  });
  afterAll(async () => {
    await g.stop();
    await upstream.close();
  });

  test("lists each account with its state, deadline, reason, streams and counts; never its key", async () => {
    expect((await fetch(`${g.url}/admin/api/upstreams`)).status).toBe(401);
    const res = await g.admin("/admin/api/upstreams");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("upstream-secret-key");
    expect(JSON.parse(text)).toEqual({
      object: "list",
      data: [
        { name: "default", state: "healthy", until: null, reason: null, inFlight: 0, priority: 1, weight: 1, models: ["*"], counters: { requests: 0, failures: {}, failovers: 0, cooldowns: 0 } },
      ],
    });
  });

  test("the pool's events and shared state show in the list and in /metrics", async () => {
    const { poolEvents, poolState } = g.deps;
    const until = Date.now() + 60_000;
    poolEvents.attempt("default");
    poolEvents.attempt("default");
    poolEvents.failure("default", "rate_limited");
    poolEvents.failover("default");
    poolEvents.cooled("default", until, "rate_limited");
    poolEvents.firstByte("default", 250);
    await poolState.cool("default", null, until, "rate_limited");
    await poolState.adjustInFlight("default", 1);
    try {
      const [account] = (await (await g.admin("/admin/api/upstreams")).json()).data;
      expect(account).toMatchObject({
        state: "cooling",
        until: new Date(until).toISOString(),
        reason: "rate_limited",
        inFlight: 1,
        counters: { requests: 2, failures: { rate_limited: 1 }, failovers: 1, cooldowns: 1 },
      });
      const metrics = await (await g.admin("/metrics")).text();
      for (const line of [
        'gantry_upstream_requests_total{account="default"} 2',
        'gantry_upstream_failures_total{account="default",kind="rate_limited"} 1',
        'gantry_upstream_failovers_total{account="default"} 1',
        'gantry_upstream_cooldowns_total{account="default"} 1',
        'gantry_upstream_account_ttfb_seconds_count{account="default"} 1',
        'gantry_upstream_in_flight{account="default"} 1',
        'gantry_upstream_state{account="default",state="cooling"} 1',
        'gantry_upstream_state{account="default",state="healthy"} 0',
      ]) {
        expect(metrics.split("\n")).toContain(line);
      }
      expect(metrics).not.toContain("upstream-secret-key");
    } finally {
      await poolState.adjustInFlight("default", -1);
      await poolState.enable("default");
    }
  });

  test("test asks the account for its model list with the account's key and says what came back", async () => {
    const before = upstream.requests.length;
    const res = await g.admin("/admin/api/upstreams/default/test", { method: "POST" });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ name: "default", ok: true, status: 200, message: "the model list answered with 3 models" });
    expect(body.ms).toBeGreaterThanOrEqual(0);
    const sent = upstream.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/models"]);
    expect(sent[0]!.headers.authorization).toBe("Bearer upstream-secret-key");
  });

  test("disable takes the account out (manual, until enabled); enable brings it back", async () => {
    const disabled = await g.admin("/admin/api/upstreams/default/disable", { method: "POST" });
    expect(disabled.status).toBe(200);
    expect(await disabled.json()).toMatchObject({ name: "default", state: "disabled", until: null, reason: "disabled by an operator" });
    expect((await g.deps.poolState.read(["default"])).get("default")!.disabled).toEqual({ reason: "disabled by an operator", manual: true });
    const enabled = await g.admin("/admin/api/upstreams/default/enable", { method: "POST" });
    expect(await enabled.json()).toMatchObject({ name: "default", state: "healthy", reason: null });
  });

  test("a pool of one whose account an operator disabled answers 503 saying so, upstream untouched; enable serves again", async () => {
    const key = await g.createKey();
    const calls = {
      responses: () => fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "hi", store: false })),
      chat: () => fetch(`${g.url}/v1/chat/completions`, authed(key, { model: "gpt-5.4", messages: [{ role: "user", content: "hi" }] })),
      raw: () => fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", instructions: "Be brief.", input: "hi", stream: true, store: false }, { "x-upstream-mode": "raw" })),
    };
    const posts = () => upstream.requests.filter((r) => r.path === "/v1/responses").length;
    expect((await g.admin("/admin/api/upstreams/default/disable", { method: "POST" })).status).toBe(200);
    try {
      const before = posts();
      for (const [name, call] of Object.entries(calls)) {
        const res = await call();
        expect([name, res.status]).toEqual([name, 503]);
        const { error } = await res.json();
        expect(error.code).toBe("upstream_unavailable");
        expect(error.message).toContain("'default' is disabled by an operator");
        expect(error.message).toContain("gantry upstreams enable default");
      }
      expect(posts()).toBe(before);
    } finally {
      expect((await g.admin("/admin/api/upstreams/default/enable", { method: "POST" })).status).toBe(200);
    }
    for (const [name, call] of Object.entries(calls)) {
      const res = await call();
      expect([name, res.status, res.status === 200 ? "" : await res.text()]).toEqual([name, 200, ""]);
    }
  });

  test("a pool of one still sends every call to its account when only automatic states hold it out", async () => {
    const key = await g.createKey();
    await g.deps.poolState.disable("default", "auth", false);
    await g.deps.poolState.cool("default", null, Date.now() + 60_000, "rate_limited");
    try {
      // The pool reads its account's state again at the next call (as after an operator's change here).
      g.deps.upstreamPool.operatorChanged();
      const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "hi", store: false }));
      expect(res.status).toBe(200);
    } finally {
      await g.deps.poolState.enable("default");
    }
  });

  test("an unknown account is a 404 with the error envelope, for every action", async () => {
    for (const action of ["test", "disable", "enable"]) {
      const res = await g.admin(`/admin/api/upstreams/nobody%20here/${action}`, { method: "POST" });
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body.error).toMatchObject({ code: "not_found", message: 'No upstream account is named "nobody here".' });
    }
  });

  test("a malformed name in the path is a 400 with the envelope, never a 500; a long one is quoted cut short", async () => {
    for (const action of ["test", "disable", "enable"]) {
      const res = await g.admin(`/admin/api/upstreams/%ZZ/${action}`, { method: "POST" });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: "invalid_request", param: "name" });
    }
    const long = await g.admin(`/admin/api/upstreams/${"x".repeat(5000)}/disable`, { method: "POST" });
    expect(long.status).toBe(404);
    expect((await long.json()).error.message.length).toBeLessThan(200);
  });

  test("a browser session needs its CSRF token to change an account", async () => {
    const signIn = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: TEST_ADMIN_TOKEN }), redirect: "manual" });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const res = await fetch(`${g.url}/admin/api/upstreams/default/disable`, { method: "POST", headers: { cookie } });
    expect(res.status).toBe(403);
    expect((await g.deps.poolState.read(["default"])).get("default")!.disabled).toBeNull();
  });
});

test("a test of an account whose key the upstream refuses reports the refusal (and changes nothing)", async () => {
  const upstream = await startFakeUpstream({ apiKey: "another-key" });
  const g = await startGantry({ config: { upstreamUrl: upstream.url } });
  try {
    const body = await (await g.admin("/admin/api/upstreams/default/test", { method: "POST" })).json();
    expect(body).toMatchObject({ name: "default", ok: false, status: 401 });
    expect(body.message).not.toContain("upstream-secret-key");
    expect((await (await g.admin("/admin/api/upstreams")).json()).data[0].state).toBe("healthy");
  } finally {
    await g.stop();
    await upstream.close();
  }
});

describe("two instances on one Redis", () => {
  test.skipIf(redisUnavailable() !== null)("an account disabled or cooled through one instance reads so on the other", async () => {
    const url = await redisUrl();
    const upstream = await startFakeUpstream({ apiKey: "upstream-secret-key" });
    const [a, b] = [await startGantry({ config: { upstreamUrl: upstream.url, redisUrl: url } }), await startGantry({ config: { upstreamUrl: upstream.url, redisUrl: url } })];
    try {
      // The run's Redis outlives a run that failed half-way: start from an enabled account.
      await b.admin("/admin/api/upstreams/default/enable", { method: "POST" });
      expect((await a.admin("/admin/api/upstreams/default/disable", { method: "POST" })).status).toBe(200);
      expect((await (await b.admin("/admin/api/upstreams")).json()).data[0]).toMatchObject({ state: "disabled", reason: "disabled by an operator" });
      await b.admin("/admin/api/upstreams/default/enable", { method: "POST" });
      const until = Date.now() + 60_000;
      await b.deps.poolState.cool("default", null, until, "rate_limited");
      await b.deps.poolState.adjustInFlight("default", 1);
      expect((await (await a.admin("/admin/api/upstreams")).json()).data[0]).toMatchObject({ state: "cooling", until: new Date(until).toISOString(), inFlight: 1 });
      await b.deps.poolState.adjustInFlight("default", -1);
      await b.deps.poolState.enable("default");
    } finally {
      await a.admin("/admin/api/upstreams/default/enable", { method: "POST" });
      await a.stop();
      await b.stop();
      await upstream.close();
    }
  });
});

describe("a pool of one disabled through another instance on one Redis", () => {
  test.skipIf(redisUnavailable() !== null)("the other instance refuses calls within a second, and serves again within a second of enable", async () => {
    const url = await redisUrl();
    const upstream = await startFakeUpstream({ apiKey: "upstream-secret-key" });
    const [a, b] = [await startGantry({ config: { upstreamUrl: upstream.url, redisUrl: url } }), await startGantry({ config: { upstreamUrl: upstream.url, redisUrl: url } })];
    try {
      await a.admin("/admin/api/upstreams/default/enable", { method: "POST" });
      const key = await b.createKey();
      const status = async () => (await fetch(`${b.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "hi", store: false }))).status;
      expect(await status()).toBe(200);
      expect((await a.admin("/admin/api/upstreams/default/disable", { method: "POST" })).status).toBe(200);
      // The documented propagation is a second; the margin is for a loaded machine.
      const off = await pollUntil(status, (s) => s === 503, { what: "b refusing calls", timeoutMs: 10_000 });
      expect(off.elapsedMs).toBeLessThan(3000);
      expect((await a.admin("/admin/api/upstreams/default/enable", { method: "POST" })).status).toBe(200);
      const on = await pollUntil(status, (s) => s === 200, { what: "b serving again", timeoutMs: 10_000 });
      expect(on.elapsedMs).toBeLessThan(3000);
    } finally {
      await a.admin("/admin/api/upstreams/default/enable", { method: "POST" });
      await a.stop();
      await b.stop();
      await upstream.close();
    }
  });
});
