/**
 * GET /metrics (Prometheus text) and its access rule, the per-request log line of non-gateway routes, and
 * the back office's chart endpoint, over real HTTP with a fake upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

async function scrape(g: Gantry): Promise<string> {
  const res = await fetch(`${g.url}/metrics`, { headers: ADMIN });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  return res.text();
}

/** The value of one sample line (`name{labels} value`), or null when absent. */
function sample(text: string, series: string): number | null {
  for (const line of text.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return null;
}

describe("/metrics", () => {
  let upstream: FakeUpstream;
  let g: Gantry;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "text", text: "Hello there", usage: { input_tokens: 11, output_tokens: 7 } } });
    g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true });
  });
  afterAll(async () => {
    await g.stop();
    await upstream.close();
  });

  test("needs the admin token by default (or a back-office session)", async () => {
    const anonymous = await fetch(`${g.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");
    expect(await anonymous.text()).not.toContain("gantry_");
    expect((await fetch(`${g.url}/metrics`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const signIn = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: TEST_ADMIN_TOKEN }), redirect: "manual" });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    expect((await fetch(`${g.url}/metrics`, { headers: { cookie } })).status).toBe(200);
  });

  test("counts gateway requests, latency, tokens, refusals, heartbeats and routes by template", async () => {
    const key = await g.createKey({ name: "metrics-key" });
    const ok = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "hi", stream: false }));
    expect(ok.status).toBe(200);
    await ok.text();
    expect((await fetch(`${g.url}/v1/responses`, authed("gk-wrong", { model: "demo-mini", input: "hi" }))).status).toBe(401);
    for (const id of ["c1", "c2"]) {
      const beat = await fetch(`${g.url}/api/v1/client/heartbeat`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-app-client-id": id },
        body: JSON.stringify({ app: "myapp", version: "1.0.0", platform: "windows", runtime: "electron" }),
      });
      expect(beat.status).toBe(200);
    }
    await fetch(`${g.url}/admin/api/keys/some-key-id`, { headers: ADMIN });
    await fetch(`${g.url}/no/such/path/12345`);

    const text = await scrape(g);
    expect(sample(text, 'gantry_gateway_requests_total{endpoint="responses",status="200"}')).toBe(1);
    expect(sample(text, 'gantry_gateway_requests_total{endpoint="responses",status="401"}')).toBe(1);
    expect(sample(text, 'gantry_admission_refusals_total{code="invalid_api_key"}')).toBe(1);
    expect(sample(text, 'gantry_gateway_request_duration_seconds_count{endpoint="responses"}')).toBe(2);
    expect(sample(text, 'gantry_upstream_ttfb_seconds_count{endpoint="responses"}')).toBe(1);
    expect(sample(text, 'gantry_tokens_total{direction="input"}')).toBe(11);
    expect(sample(text, 'gantry_tokens_total{direction="output"}')).toBe(7);
    expect(sample(text, "gantry_heartbeats_ingested_total")).toBe(2);
    expect(sample(text, "gantry_clients_online")).toBe(2);
    expect(sample(text, "gantry_gateway_in_flight_requests")).toBe(0);
    expect(sample(text, "gantry_downloads_total")).toBe(0);
    expect(sample(text, "gantry_release_sync_running")).toBe(0);
    expect(sample(text, 'gantry_http_requests_total{route="/v1/responses",method="POST",status="200"}')).toBe(1);
    expect(sample(text, 'gantry_http_requests_total{route="/api/v1/client/heartbeat",method="POST",status="200"}')).toBe(2);
    // The route template is the label, never the raw path.
    expect(sample(text, 'gantry_http_requests_total{route="/admin/api/keys/:id",method="GET",status="404"}')).toBe(1);
    expect(sample(text, 'gantry_http_requests_total{route="(unmatched)",method="GET",status="404"}')).toBe(1);
    expect(text).not.toContain("some-key-id");
    expect(text).not.toContain("12345");
    // Refused admin requests are counted under a coarse label.
    expect(sample(text, 'gantry_http_requests_total{route="/metrics",method="GET",status="401"}')).toBe(2);
    expect(text).not.toContain(key);
  });

  test("one JSON log line per request; gateway requests are logged once, by the gateway", async () => {
    g.logs.length = 0;
    const key = await g.createKey({ name: "log-key" });
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "hi", stream: false }, { "x-request-id": "req-gateway-1" }));
    await res.text();
    await fetch(`${g.url}/api/v1/announcements?surface=client`, { headers: { "x-request-id": "req-site-1" } });
    // No wait: both lines are written before the reply leaves (gateway/call.ts, http/request-log.ts).
    const lines = g.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    // The caller's id is logged beside Gantry's own, which is the reply's x-request-id (and the ledger's).
    const gateway = lines.filter((l) => l.clientRequestId === "req-gateway-1");
    expect(gateway).toHaveLength(1);
    expect(gateway[0].requestId).toBe(res.headers.get("x-request-id"));
    expect(gateway[0]).toMatchObject({ route: "responses", status: 200, model: "demo-mini" });
    expect(gateway[0].keyId).toStartWith("key_");
    const site = lines.filter((l) => l.requestId === "req-site-1");
    expect(site).toHaveLength(1);
    expect(site[0]).toMatchObject({ route: "/api/v1/announcements", method: "GET", status: 200 });
    expect(typeof site[0].durationMs).toBe("number");
    for (const line of g.logs) expect(line).not.toContain(key);
  });

  test("the back office's overview chart data comes from the ledger", async () => {
    const res = await fetch(`${g.url}/admin/api/metrics/overview?range=1h`, { headers: ADMIN });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.points).toHaveLength(60);
    expect(body.totals.requests).toBeGreaterThanOrEqual(2);
    expect(body.totals.inputTokens).toBeGreaterThanOrEqual(22);
    expect(body.now.clientsOnline).toBe(2);
    expect(body.online.points.length).toBeGreaterThan(0);
    expect((await fetch(`${g.url}/admin/api/metrics/overview?range=2y`, { headers: ADMIN })).status).toBe(400);
  });
});

describe("/metrics with GANTRY_METRICS_PUBLIC=true", () => {
  test("is open, and each app instance has its own registry", async () => {
    const a = await startGantry({ config: { metricsPublic: true } });
    const b = await startGantry({ config: { metricsPublic: true } });
    try {
      for (let i = 0; i < 3; i++) await fetch(`${a.url}/healthz`);
      const textA = await (await fetch(`${a.url}/metrics`)).text();
      const textB = await (await fetch(`${b.url}/metrics`)).text();
      expect(sample(textA, 'gantry_http_requests_total{route="/healthz",method="GET",status="200"}')).toBe(3);
      expect(sample(textB, 'gantry_http_requests_total{route="/healthz",method="GET",status="200"}')).toBeNull();
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe("a caller that leaves before the upstream answered", () => {
  test("is counted as 499 client_closed in /metrics and the ledger, not 502", async () => {
    const upstream = await startFakeUpstream({ scenario: { kind: "hang-before-headers" } });
    const g = await startGantry({ config: { upstreamUrl: upstream.url, upstreamFirstByteTimeoutMs: 60_000 } });
    try {
      const key = await g.createKey({ name: "abort-key" });
      const id = (await g.deps.keys.get("abort-key"))!.id;
      for (const [path, body] of [
        ["/v1/responses", { model: "demo-mini", input: "hi", stream: true }],
        ["/v1/chat/completions", { model: "demo-mini", messages: [{ role: "user", content: "hi" }] }],
      ] as const) {
        const controller = new AbortController();
        const pending = fetch(`${g.url}${path}`, { ...authed(key, body), signal: controller.signal }).catch(() => null);
        const opened = upstream.requests.length;
        await pollUntil(() => upstream.open === 1 && upstream.requests.length >= opened, Boolean, { what: "the upstream request to be open" });
        controller.abort();
        expect(await pending).toBeNull();
        await pollUntil(() => upstream.open === 0 && g.deps.limiter.inFlight(id) === 0, Boolean, { what: "the aborted call to be settled" });
      }
      const rows = await pollUntil(() => g.deps.ledger.recent(2, id), (r) => r.length === 2, { what: "two ledger rows" });
      for (const row of rows.value) expect(row).toMatchObject({ status: 499, errorCode: "client_closed" });
      const text = await scrape(g);
      expect(sample(text, 'gantry_gateway_requests_total{endpoint="responses",status="499"}')).toBe(1);
      expect(sample(text, 'gantry_gateway_requests_total{endpoint="chat.completions",status="499"}')).toBe(1);
      expect(sample(text, 'gantry_gateway_requests_total{endpoint="responses",status="502"}')).toBeNull();
      expect(sample(text, 'gantry_gateway_requests_total{endpoint="chat.completions",status="502"}')).toBeNull();
      expect(text).not.toMatch(/gantry_http_requests_total\{route="\/v1\/(responses|chat\/completions)",method="POST",status="502"\}/);
    } finally {
      await g.stop();
      await upstream.close();
    }
  });
});
