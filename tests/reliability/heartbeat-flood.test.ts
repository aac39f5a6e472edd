/**
 * An unauthenticated heartbeat flood (issue 31): one address sent 100,000 random client ids in ~20 s, all were
 * kept (90 days, ~570 bytes each), the online statistics were whatever it said, and once the disk was full paying
 * keys got 503. Now: an address adds at most GANTRY_HEARTBEAT_CLIENTS_PER_HOUR new ids an hour and sends at most
 * GANTRY_HEARTBEAT_RPM heartbeats a minute (429 with Retry-After beyond), other addresses are not affected, and
 * below GANTRY_STORAGE_RESERVE_MB of free space heartbeats get 503 while paying keys are still served and billed.
 * Addresses come from X-Forwarded-For through a trusted proxy (client-address.ts), as behind nginx.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FileSystemMirror } from "../../src/store/files/fs-mirror";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream({ scenario: { kind: "text", text: "paid for" } });
});
afterAll(() => upstream.close());

function beat(g: Gantry, clientId: string, address: string): Promise<Response> {
  return fetch(`${g.url}/api/v1/client/heartbeat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-client-id": clientId, "x-forwarded-for": address },
    body: JSON.stringify({ app: "demo", version: "1.0.0", platform: "linux" }),
  });
}

function ask(g: Gantry, key: string): Promise<Response> {
  return fetch(`${g.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input: "hello", store: false }),
  });
}

describe("one address, many client ids", () => {
  let g: Gantry;
  // A fixed clock: the test never straddles the hour's window.
  const clock = Date.parse("2026-03-01T10:05:00Z");
  beforeAll(async () => {
    g = await startGantry({
      now: () => clock,
      config: { upstreamUrl: upstream.url, trustedProxies: ["127.0.0.1"], heartbeatRpm: 100_000, heartbeatClientsPerHour: 200 },
    });
  });
  afterAll(() => g.stop());

  test("2,000 random ids from one address: 200 are taken, the rest get 429; known ids, other addresses and paying keys go on", async () => {
    const flood = "198.51.100.23";
    const ids = Array.from({ length: 2000 }, () => crypto.randomUUID());
    const statuses: number[] = [];
    let refusal: Response | null = null;
    for (let i = 0; i < ids.length; i += 50) {
      const replies = await Promise.all(ids.slice(i, i + 50).map((id) => beat(g, id, flood)));
      for (const r of replies) {
        statuses.push(r.status);
        if (r.status === 429 && !refusal) refusal = r;
        else await r.arrayBuffer();
      }
    }
    // Before: all 2,000 taken.
    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1800);
    expect(Number(refusal!.headers.get("retry-after"))).toBe(55 * 60);
    expect((await refusal!.json()).error).toMatchObject({ code: "too_many_requests", type: "invalid_request_error" });
    expect(await g.deps.engagement.clients.knownCount()).toBe(200);

    // An id taken this hour keeps reporting; another address's clients are not held back by the flood.
    const taken = ids[statuses.indexOf(200)]!;
    expect((await beat(g, taken, flood)).status).toBe(200);
    expect((await beat(g, "a-real-client", "203.0.113.9")).status).toBe(200);
    const key = await g.createKey();
    const paid = await ask(g, key);
    expect(paid.status).toBe(200);
    await paid.arrayBuffer();
  }, 60_000);
});

test("heartbeats per address per minute: past GANTRY_HEARTBEAT_RPM, 429 with the seconds left in the minute", async () => {
  const clock = Date.parse("2026-03-01T10:05:20Z");
  const g = await startGantry({ now: () => clock, config: { upstreamUrl: upstream.url, trustedProxies: ["127.0.0.1"], heartbeatRpm: 30 } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await beat(g, "chatty-client", "198.51.100.77")).status);
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
    const refused = await beat(g, "chatty-client", "198.51.100.77");
    expect(refused.headers.get("retry-after")).toBe("40");
    expect((await beat(g, "chatty-client", "198.51.100.78")).status).toBe(200);
  } finally {
    await g.stop();
  }
});

test("below the storage reserve heartbeats get 503, downloads are served but neither counted nor mirrored, and paying keys are still served and billed", async () => {
  const file = new Uint8Array(50_000).map((_, i) => i % 251);
  const origin = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(file) });
  // A reserve larger than any disk: free space is always below it (read from the real file system).
  // The mirror's writes are counted as they start (pull-through starts one with the first bytes it proxies).
  let mirrorWrites = 0;
  const g = await startGantry({
    config: { upstreamUrl: upstream.url, storageReserveMb: 2 ** 30, allowedFetchHosts: ["127.0.0.1"] },
    captureLogs: true,
    mirror: (dataDir) => {
      const mirror = new FileSystemMirror(join(dataDir, "mirror"));
      const put = mirror.put.bind(mirror);
      mirror.put = (...args) => {
        mirrorWrites += 1;
        return put(...args);
      };
      return mirror;
    },
  });
  try {
    const res = await beat(g, "some-client", "127.0.0.1");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect((await res.json()).error.code).toBe("service_unavailable");
    expect(await g.deps.engagement.clients.knownCount()).toBe(0);

    const key = await g.createKey();
    const paid = await ask(g, key);
    expect(paid.status).toBe(200);
    await paid.json();
    expect(await g.query("SELECT id FROM usage_ledger WHERE request_id = $1", paid.headers.get("x-request-id")!)).toHaveLength(1);
    expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
    expect(g.logs.filter((l) => l.includes("below the reserve kept for billing"))).toHaveLength(1);

    // A proxied asset downloaded whole, twice: the bytes go out, but nothing is written for it (no pull-through
    // into the mirror, no download count), since anyone can make the site write that way.
    await g.deps.releases.catalog.create("1.0.0", {}, true);
    const added = await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "web-1.0.0.zip", url: `http://127.0.0.1:${origin.port}/web.zip` }) });
    expect(added.status).toBe(201);
    const assetId = (await added.json()).id;
    for (let i = 0; i < 2; i++) {
      const link = await fetch(`${g.url}/api/v1/download/${assetId}`, { redirect: "manual" });
      const body = new Uint8Array(await (await fetch(link.headers.get("location")!)).arrayBuffer());
      expect(body).toEqual(file);
    }
    expect(mirrorWrites).toBe(0);
    await g.deps.ledger.flush();
    const asset = (await (await g.admin("/admin/api/releases/1.0.0")).json()).assets.find((a: any) => a.id === assetId);
    expect(asset).toMatchObject({ source: "proxy", downloads: 0 });
  } finally {
    await g.stop();
    await origin.stop(true);
  }
});
