/**
 * `gantry store copy`, run as the CLI: a demo deployment on SQLite and its mirror moves up into PostgreSQL and
 * an S3 bucket (radosgw) with every row and file, a server on the target answers the same documents and
 * downloads the same bytes, a non-empty target is refused unless --force, and the way back to a data dir gives
 * the same again. A file missing from the source is reported and fails the copy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "bun";
import { defaultConfig, type Config } from "../../src/config";
import { createDeps, type AppDeps } from "../../src/deps";
import { seedDemo } from "../../src/cli/demo-seed";
import { silentLogger } from "../../src/log";
import { startServer } from "../../src/server";
import { runGantry } from "../reliability/serve-process";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { s3Server, s3Unavailable, type S3Server } from "../support/s3";

const unavailable = postgresUnavailable() ?? s3Unavailable();
const ADMIN = "gat-store-copy-admin-token-000000000001";
const sha256 = (b: ArrayBuffer) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

const gantry = runGantry;

/** A server on the given settings, in this process, on a free port. */
async function serve(config: Partial<Config>): Promise<{ url: string; deps: AppDeps; stop(): Promise<void> }> {
  const deps = await createDeps(defaultConfig({ host: "127.0.0.1", port: 0, adminToken: ADMIN, ...config }), { log: silentLogger });
  const running = startServer(deps, { hostname: "127.0.0.1", port: 0 });
  return {
    url: running.url,
    deps,
    // Stopping the server closes the deps, and with them the stores.
    stop: () => running.stop(1000),
  };
}

/** What a deployment serves, with the base URL taken out: equal documents mean equal data. */
async function documents(url: string): Promise<Record<string, unknown>> {
  const get = async (path: string, admin = false) => {
    const res = await fetch(url + path, { headers: admin ? { authorization: `Bearer ${ADMIN}` } : {} });
    expect(res.status).toBe(200);
    return JSON.parse((await res.text()).replaceAll(url, "BASE"));
  };
  const keys = await get("/admin/api/keys", true);
  return {
    latest: await get("/api/v1/latest"),
    manifest: await get("/update/latest.json"),
    announcements: await get("/api/v1/announcements?surface=client&test=1"),
    releases: await get("/admin/api/releases", true),
    keys,
    // When the statistics were computed is not data.
    clients: { ...(await get("/admin/api/stats/clients", true)), generatedAt: null },
  };
}

/** The id of an asset added now. */
async function newAssetId(url: string): Promise<number> {
  const res = await fetch(`${url}/admin/api/releases/0.0.1/assets`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `new-${crypto.randomUUID()}.zip`, url: "https://example.invalid/new.zip" }),
  });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

if (unavailable) {
  console.warn(`store copy tests skipped: ${unavailable}`);
  test.skip(`store copy: ${unavailable}`, () => {});
} else {
  let s3: S3Server;
  let bucket: string;
  let db: { url: string; drop(): Promise<void> };
  const dirs: string[] = [];
  const dir = (name: string) => {
    const d = mkdtempSync(join(tmpdir(), `gantry-copy-${name}-`));
    dirs.push(d);
    return d;
  };
  let embedded: string;
  let before: Record<string, unknown>;
  let s3Env: Record<string, string>;
  /** The newest asset id, deleted before the copy: no store may hand it out again. */
  let deletedAssetId: number;
  let someVersion: string;

  beforeAll(async () => {
    s3 = await s3Server();
    bucket = await s3.createBucket();
    db = await freshDatabase();
    s3Env = {
      GANTRY_S3_BUCKET: bucket,
      GANTRY_S3_ENDPOINT: s3.endpoint,
      GANTRY_S3_REGION: s3.region,
      GANTRY_S3_ACCESS_KEY_ID: s3.accessKeyId,
      GANTRY_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
    // An embedded deployment with everything in it: keys with usage, ledger, releases with mirrored files,
    // download counts, announcements, clients.
    embedded = dir("embedded");
    const source = await serve({ dataDir: embedded });
    const seeded = await seedDemo(source.deps);
    seeded.stop();
    someVersion = "0.0.1";
    await source.deps.releases.catalog.create(someVersion, {}, true);
    const top = await source.deps.releases.catalog.addUrlAsset(someVersion, "deleted-before-copy.zip", "https://example.invalid/x.zip");
    await source.deps.releases.catalog.deleteAsset(someVersion, "deleted-before-copy.zip");
    deletedAssetId = top.id;
    before = await documents(source.url);
    await source.stop();
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe("gantry store copy", () => {
    test("moving up: every row into PostgreSQL, every file into the bucket, checked, and served alike", async () => {
      // A password in the target URL (the test server trusts loopback and ignores it) is never printed.
      const withPassword = db.url.replace("postgres://postgres@", "postgres://postgres:copy-secret-pw@");
      expect(withPassword).toContain("copy-secret-pw");
      const r = await gantry(["store", "copy", "--data-dir", embedded, "--to", withPassword, "--json"], s3Env);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const report = JSON.parse(r.out);
      expect(report.ok).toBe(true);
      const byTable = Object.fromEntries(report.tables.map((t: any) => [t.table, t]));
      for (const t of ["api_keys", "key_usage", "usage_ledger", "releases", "release_assets", "announcements", "clients"]) {
        expect(byTable[t].source).toBeGreaterThan(0);
        expect(byTable[t].target).toBe(byTable[t].source);
        expect(byTable[t].same).toBe(true);
      }
      expect(report.files.copied).toBeGreaterThan(0);
      expect(report.files.missing).toEqual([]);
      expect(r.out).not.toContain("copy-secret-pw");
      expect(report.target).toStartWith("PostgreSQL 127.0.0.1:");

      const shared = await serve({ dataDir: dir("shared"), databaseUrl: db.url, s3Bucket: bucket, s3Endpoint: s3.endpoint, s3Region: s3.region, s3AccessKeyId: s3.accessKeyId, s3SecretAccessKey: s3.secretAccessKey });
      try {
        expect(await documents(shared.url)).toEqual(before);
        // The bytes come from the bucket, and are the ones the document names.
        const latest = (before.latest as { assets: Array<{ id: number; sha256: string }> }).assets;
        for (const asset of latest) {
          const res = await fetch(`${shared.url}/api/v1/download/${asset.id}`);
          expect(res.status).toBe(200);
          expect(`sha256:${sha256(await res.arrayBuffer())}`).toBe(asset.sha256);
        }
        // New rows get ids after the copied ones (the sequences were moved past them).
        const created = await fetch(`${shared.url}/admin/api/announcements`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
          body: JSON.stringify({ title: "after the move", body: "x", targetSurface: "all" }),
        });
        expect(created.status).toBe(201);
        const all = await (await fetch(`${shared.url}/admin/api/announcements`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
        expect(all.data.length).toBeGreaterThan(1);
        expect(new Set(all.data.map((a: { id: number }) => a.id)).size).toBe(all.data.length);
        // An asset id deleted before the move is not handed out again after it.
        expect(await newAssetId(shared.url)).toBeGreaterThan(deletedAssetId);
      } finally {
        await shared.stop();
      }
      // The target notes that its files are now in the bucket: an instance started without it is refused.
      await expect(createDeps(defaultConfig({ dataDir: dir("no-bucket"), databaseUrl: db.url }), { log: silentLogger })).rejects.toThrow(
        `this database's asset files are in the S3 bucket "${bucket}"`,
      );
    }, 120_000);

    test("a target that holds records is refused unless --force", async () => {
      const refused = await gantry(["store", "copy", "--data-dir", embedded, "--to", db.url], s3Env);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain("is not empty");
      expect(refused.err).toContain("--force");
      const forced = await gantry(["store", "copy", "--data-dir", embedded, "--to", db.url, "--force", "--json"], s3Env);
      expect(forced.code).toBe(0);
      const report = JSON.parse(forced.out);
      expect(report.ok).toBe(true);
      // The files were there already: nothing uploaded twice.
      expect(report.files.copied).toBe(0);
      expect(report.files.present).toBeGreaterThan(0);
    }, 120_000);

    test("moving back: PostgreSQL and the bucket into a new data dir, served alike", async () => {
      const back = join(dir("back"), "data");
      const r = await gantry(["store", "copy", "--database-url", db.url, "--data-dir", dir("cli"), "--to", back, "--json"], s3Env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out).ok).toBe(true);
      // The new data dir notes that its files are in its own mirror: it starts without the bucket (and not with it).
      await expect(
        serve({ dataDir: back, s3Bucket: bucket, s3Endpoint: s3.endpoint, s3Region: s3.region, s3AccessKeyId: s3.accessKeyId, s3SecretAccessKey: s3.secretAccessKey }),
      ).rejects.toThrow("this database's asset files are in the data dir's mirror");
      const again = await serve({ dataDir: back });
      try {
        expect(await documents(again.url)).toEqual(before);
        expect(await newAssetId(again.url)).toBeGreaterThan(deletedAssetId);
      } finally {
        await again.stop();
      }
    }, 120_000);

    test("a file missing from the source is named and fails the copy", async () => {
      const latest = (before.latest as { assets: Array<{ sha256: string }> }).assets;
      const gone = latest[0]!.sha256.replace("sha256:", "");
      const client = new S3Client({ bucket, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
      await client.file(`sha256/${gone.slice(0, 2)}/${gone}`).delete();
      const r = await gantry(["store", "copy", "--database-url", db.url, "--data-dir", dir("cli"), "--to", join(dir("broken"), "data")], s3Env);
      expect(r.code).toBe(1);
      expect(r.out).toContain(`missing in the source mirror: ${gone}`);
      expect(r.err).toContain("not exact");
    }, 120_000);

    test("wrong directions are refused with a pointer to the right tool", async () => {
      const toDir = await gantry(["store", "copy", "--data-dir", embedded, "--to", dir("x")]);
      expect(toDir.code).toBe(2);
      expect(toDir.err).toContain("postgres://");
      const noTo = await gantry(["store", "copy", "--data-dir", embedded]);
      expect(noTo.code).toBe(2);
      expect(noTo.err).toContain("--to");
    });
  });
}
