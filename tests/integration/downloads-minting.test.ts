/**
 * Minting download links is cheap and bounded (issue 19): a link writes no row, one client address may mint
 * GANTRY_DOWNLOAD_MINT_RPM a minute, the links' secret lives in the store (shared by every instance on it), and
 * the purge of expired count records never stalls the event loop.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_BACKEND, startGantry, type Gantry } from "../support/harness";
import { DownloadService, DOWNLOAD_SECRET_META_KEY } from "../../src/site/downloads/download-service";
import { silentLogger } from "../../src/log";

let g: Gantry;
let assetId: number;

beforeAll(async () => {
  g = await startGantry({ config: { downloadMintRpm: 5, trustedProxies: ["127.0.0.1"], s3RedirectDownloads: false } });
  await g.deps.releases.catalog.create("1.0.0", {}, true);
  assetId = (await g.deps.releases.catalog.upload("1.0.0", "web-1.0.0.zip", new Blob(["zip bytes"]).stream(), 9)).id;
});
afterAll(() => g?.stop());

const mint = (client: string) => fetch(`${g.url}/api/v1/download/${assetId}`, { redirect: "manual", headers: { "x-forwarded-for": client } });
const rows = async () => Number((await g.query("SELECT CAST(count(*) AS DOUBLE PRECISION) AS n FROM download_tokens"))[0].n);

describe("minting", () => {
  test("a link writes nothing; an address may mint GANTRY_DOWNLOAD_MINT_RPM a minute, then 429 with Retry-After", async () => {
    const before = await rows();
    for (let i = 0; i < 5; i++) expect((await mint("198.51.100.61")).status).toBe(302);
    expect(await rows()).toBe(before);
    const refused = await mint("198.51.100.61");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await refused.json()).error.code).toBe("too_many_requests");
    // Another address (and another /64) has its own budget.
    expect((await mint("198.51.100.62")).status).toBe(302);
    expect((await mint("2001:db8:9::1")).status).toBe(302);
  });

  test("the secret is generated once into the meta table; another instance on the store verifies the links", async () => {
    const secret = await g.deps.meta.get(DOWNLOAD_SECRET_META_KEY);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const url = (await mint("198.51.100.63")).headers.get("location")!;
    const token = url.slice(url.lastIndexOf("/") + 1);
    const other = new DownloadService({
      store: g.deps.releases.store,
      tokens: g.deps.stores.downloads,
      meta: g.deps.meta,
      mirror: g.deps.releases.mirror,
      config: { downloadTokenTtlSeconds: 600, downloadMintRpm: 0 },
      now: Date.now,
      fetch,
      log: silentLogger,
    });
    const res = await other.serve(new Request(url), token, "198.51.100.63");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("zip bytes");
    expect(await g.deps.meta.get(DOWNLOAD_SECRET_META_KEY)).toBe(secret);
  });
});

describe.skipIf(TEST_BACKEND === "shared")("purging expired count records", () => {
  test("240,000 expired rows go in small batches: the event loop is never held for long", async () => {
    g.db.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 240000)
       INSERT INTO download_tokens (token_hash, asset_id, sha256, created_at, expires_at, counted) SELECT printf('%064d', i), ?, '', 1, 2, 1 FROM n`,
      [assetId],
    );
    let worst = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const t = performance.now();
      worst = Math.max(worst, t - last);
      last = t;
    }, 1);
    const purged = await g.deps.releases.downloads.purgeExpired(1_000_000);
    clearInterval(timer);
    expect(purged).toBe(240_000);
    expect(g.db.query("SELECT count(*) AS n FROM download_tokens WHERE expires_at < 1000000").get()).toEqual({ n: 0 });
    // One statement for all of them held the loop 2.3 s; a batch of 500 takes a few milliseconds.
    expect(worst).toBeLessThan(200);
  }, 60_000);
});
