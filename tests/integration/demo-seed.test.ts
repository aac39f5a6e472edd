/**
 * The demo's whole sample data set: the back office's Overview, Clients and Keys have something to show on
 * first look, the figures agree with each other, the announcements talk about the versions the demo publishes,
 * and seeding a kept data dir again adds no second helping.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { seedDemo, type DemoSeed } from "../../src/cli/demo-seed";
import { DEMO_CLIENTS_KNOWN, DEMO_CLIENTS_ONLINE } from "../../src/cli/demo-seed-clients";
import { compareVersions } from "../../src/site/releases/rules/versions";
import { createSimulatedUpstream } from "../../src/gateway/simulator/simulated-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let upstream: ReturnType<typeof Bun.serve>;
let g: Gantry;
let seed: DemoSeed;
beforeAll(async () => {
  upstream = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createSimulatedUpstream({ deltaDelayMs: 0 }) });
  g = await startGantry({ config: { upstreamUrl: `http://127.0.0.1:${upstream.port}/v1` } });
  seed = await seedDemo(g.deps);
});
afterAll(async () => {
  seed.stop();
  await g.stop();
  await upstream.stop(true);
});

const admin = async (path: string) => {
  const res = await g.admin(path);
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};

test("Overview: traffic in every range, clients online, and the online card agrees with the chart", async () => {
  for (const range of ["1h", "24h", "7d", "30d"]) {
    const o = await admin(`/admin/api/metrics/overview?range=${range}`);
    expect(o.totals.requests).toBeGreaterThan(range === "1h" ? 10 : 100);
    // About 2.5 % of requests fail: some in a day's few hundred (an hour's few dozen may have none).
    if (range !== "1h") expect(o.totals.errors).toBeGreaterThan(0);
    expect(o.totals.errors / o.totals.requests).toBeLessThan(0.1);
    expect(o.totals.inputTokens).toBeGreaterThan(0);
    expect(o.now.clientsOnline).toBe(DEMO_CLIENTS_ONLINE);
    const online = o.online.points.filter((p: any) => p.online !== null);
    expect(online.length).toBeGreaterThan(o.online.points.length / 2);
    expect(Math.max(...online.map((p: any) => p.online))).toBeLessThanOrEqual(DEMO_CLIENTS_ONLINE);
    expect(online.at(-1).online).toBe(DEMO_CLIENTS_ONLINE);
  }
});

test("Clients: known and online clients on the published versions and several platforms and locales", async () => {
  const s = await admin("/admin/api/stats/clients");
  expect(s.online).toBe(DEMO_CLIENTS_ONLINE);
  expect(s.knownClients).toBe(DEMO_CLIENTS_KNOWN);
  expect(Object.keys(s.byVersion).sort()).toEqual(["1.1.0", "1.2.0"]);
  expect(s.byVersion["1.2.0"]).toBeGreaterThan(s.byVersion["1.1.0"]);
  expect(Object.keys(s.byPlatform).length).toBeGreaterThanOrEqual(3);
  expect(Object.keys(s.byLocale).length).toBeGreaterThanOrEqual(3);
  // Canonical tags, as real heartbeats are stored.
  for (const tag of Object.keys(s.byLocale)) expect(tag).toMatch(/^[a-z]{2}-[A-Z]{2}$/);
});

test("Keys: the demo key has usage well under its quota and still works; the other sample keys have theirs", async () => {
  const { data } = await admin("/admin/api/keys");
  const byName = Object.fromEntries(data.map((k: any) => [k.name, k]));
  expect(Object.keys(byName).sort()).toEqual(["demo", "mobile-app", "nightly-batch"]);
  const demo = byName.demo;
  expect(demo.usage.requests).toBeGreaterThan(0);
  expect(demo.usage.tokens).toBeLessThan(demo.limits.quotaTokens / 2);
  expect(byName["nightly-batch"].state).toBe("expired");
  for (const k of data) expect(k.usage.requests).toBeGreaterThan(0);

  // The printed key answers through the simulated model, and the portal's totals (the recorded ones) include the
  // seeded usage and this request.
  const res = await fetch(`${g.url}/v1/responses`, authed(seed.apiKey, { model: "demo-mini", input: "Hello, Gantry!" }));
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const portal = await fetch(`${g.url}/portal/api/usage`, { method: "POST", headers: { authorization: `Bearer ${seed.apiKey}` } });
  expect(portal.status).toBe(200);
  expect(((await portal.json()) as any).key.usage.requests).toBe(demo.usage.requests + 1);
});

test("announcements talk only about the versions the demo publishes (a later one only in a test-only item)", async () => {
  const published = (await g.deps.releases.store.list()).map((r) => r.version);
  const latest = [...published].sort(compareVersions).at(-1)!;
  expect(latest).toBe("1.2.0");
  for (const a of (await g.deps.engagement.announcements.list())) {
    const texts = [a.title, a.body, ...Object.values(a.locales).flatMap((t) => [t.title ?? "", t.body ?? ""])].join(" ");
    for (const v of texts.match(/\b\d+\.\d+(\.\d+)?\b/g) ?? []) {
      const ok = published.includes(v) || v === a.minVersion || (a.testOnly && compareVersions(v, latest) > 0);
      expect({ announcement: a.title, version: v, ok }).toEqual({ announcement: a.title, version: v, ok: true });
    }
    // A version range ends at a published version below the latest: it asks old builds to update.
    if (a.maxVersion) {
      expect(published).toContain(a.maxVersion);
      expect(compareVersions(a.maxVersion, latest)).toBeLessThan(0);
    }
  }
});

test("the online sample clients report through the heartbeat service, as real ones do", async () => {
  // Committed by the service's group commit, as a client's heartbeat is (no write path of its own).
  await pollUntil(() => g.deps.engagement.heartbeats.totals.heartbeats, (n) => n >= DEMO_CLIENTS_ONLINE, { what: "the sample clients' heartbeats" });
});

test("seeding again (a kept data dir) adds no second helping of clients or traffic", async () => {
  // Every row in one bucket: the ledger's own count, on any backend.
  const rows = async () => (await g.deps.ledger.series(0, Number.MAX_SAFE_INTEGER)).reduce((n, p) => n + p.requests, 0);
  const before = await rows();
  expect(before).toBeGreaterThan(0);
  const again = await seedDemo(g.deps);
  again.stop();
  expect(await rows()).toBe(before);
  expect((await admin("/admin/api/stats/clients")).knownClients).toBe(DEMO_CLIENTS_KNOWN);
  expect((await g.deps.engagement.announcements.list()).length).toBe(4);
});
