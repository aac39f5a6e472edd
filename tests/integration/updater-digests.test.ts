/**
 * The digests updaters check (issue 35): SHA-512 in base64 (electron-updater) and SHA-1 in hex (Squirrel.Windows),
 * computed when bytes are stored — uploaded, synced (downloaded, or already held for another asset), pulled through
 * a proxied download — and kept with the asset; assets stored before them get them from the backfill a server runs
 * at start. Checked against Node's crypto, as the updaters compute them. Runs on SQLite and, with
 * GANTRY_TEST_BACKEND=shared, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Server } from "bun";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf, startFakeGitHub, type FakeGitHub } from "../support/fake-github";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { backfillUpdaterDigests } from "../../src/site/releases/asset-digests";

const expected = (b: Uint8Array) => ({
  sha512: createHash("sha512").update(b).digest("base64"),
  sha1: createHash("sha1").update(b).digest("hex"),
});
const tempDir = tempDirs();

const upload = bytesOf("upload", 150_000);
const proxied = bytesOf("proxied", 90_000);
const synced = bytesOf("synced", 60_000);

let g: Gantry;
let gh: FakeGitHub;
let origin: Server<undefined>;

async function adminAsset(version: string, name: string): Promise<any> {
  const r = (await (await g.admin(`/admin/api/releases/${version}`)).json()) as any;
  return r.assets.find((a: any) => a.name === name);
}

beforeAll(async () => {
  origin = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(proxied) });
  gh = startFakeGitHub({
    releases: [{
      id: 1,
      tag: "v3.0.0",
      assets: [
        { id: 31, name: "App-3.0.0-x64-setup.exe", bytes: synced, withDigest: true },
        // The same bytes as an uploaded file: sync finds them in the mirror and downloads nothing.
        { id: 32, name: "App-3.0.0-full.nupkg", bytes: upload, withDigest: true },
      ],
    }],
  });
  g = await startGantry({ config: { allowedFetchHosts: ["127.0.0.1"] } });
});
afterAll(async () => {
  await g.stop();
  await gh.stop();
  origin.stop(true);
});

describe("digests computed where bytes are stored", () => {
  test("an upload", async () => {
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "1.0.0" }) })).status).toBe(201);
    const put = await g.admin("/admin/api/releases/1.0.0/assets/App-1.0.0-x64-setup.exe", { method: "PUT", body: upload });
    expect(put.status).toBeLessThan(300);
    expect(await adminAsset("1.0.0", "App-1.0.0-x64-setup.exe")).toMatchObject(expected(upload));
  });

  test("a proxied asset pulled through on its first whole download", async () => {
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "2.0.0" }) })).status).toBe(201);
    const url = `http://127.0.0.1:${origin.port}/App-2.0.0-arm64.dmg`;
    expect((await g.admin("/admin/api/releases/2.0.0/assets", { method: "POST", body: JSON.stringify({ name: "App-2.0.0-arm64.dmg", url }) })).status).toBe(201);
    expect(await adminAsset("2.0.0", "App-2.0.0-arm64.dmg")).toMatchObject({ sha512: "", sha1: "" });
    const id = (await adminAsset("2.0.0", "App-2.0.0-arm64.dmg")).id;
    const res = await fetch(`${g.url}/api/v1/download/${id}`);
    expect(new Uint8Array(await res.arrayBuffer()).length).toBe(proxied.length);
    await pollUntil(() => adminAsset("2.0.0", "App-2.0.0-arm64.dmg"), (a) => a.source === "mirror", { what: "pulled through" });
    expect(await adminAsset("2.0.0", "App-2.0.0-arm64.dmg")).toMatchObject(expected(proxied));
  });

  test("a sync: downloaded bytes, and bytes already held for another asset", async () => {
    const report = await g.deps.releases.sync.run({ repo: "acme/app", apiUrl: gh.apiUrl });
    expect(report.reused.map((r) => r.name)).toEqual(["App-3.0.0-full.nupkg"]);
    expect(await adminAsset("v3.0.0", "App-3.0.0-x64-setup.exe")).toMatchObject(expected(synced));
    expect(await adminAsset("v3.0.0", "App-3.0.0-full.nupkg")).toMatchObject(expected(upload));
  });
});

describe("assets stored before the digests existed", () => {
  test("the backfill computes them once from the stored bytes; an asset without bytes is left alone", async () => {
    expect((await g.admin("/admin/api/releases/1.0.0/assets", { method: "POST", body: JSON.stringify({ name: "App-1.0.0-x64.msi", url: "" }) })).status).toBe(201);
    await g.query("UPDATE release_assets SET sha512 = '', sha1 = ''");
    expect(await adminAsset("1.0.0", "App-1.0.0-x64-setup.exe")).toMatchObject({ sha512: "", sha1: "" });
    const store = g.deps.releases.store;
    // Four mirrored assets, three distinct files.
    expect(await backfillUpdaterDigests({ store, mirror: g.deps.releases.mirror })).toBe(4);
    expect(await adminAsset("1.0.0", "App-1.0.0-x64-setup.exe")).toMatchObject(expected(upload));
    expect(await adminAsset("2.0.0", "App-2.0.0-arm64.dmg")).toMatchObject(expected(proxied));
    expect(await adminAsset("v3.0.0", "App-3.0.0-full.nupkg")).toMatchObject(expected(upload));
    expect(await adminAsset("1.0.0", "App-1.0.0-x64.msi")).toMatchObject({ sha512: "", sha1: "", source: "unavailable" });
    expect(await backfillUpdaterDigests({ store, mirror: g.deps.releases.mirror })).toBe(0);
  });

  test("a server started on a database whose assets lack them fills them in by itself", async () => {
    const dir = tempDir("digests-backfill");
    const first = await startGantry({ databasePath: join(dir, "gantry.db"), config: { dataDir: dir } });
    await first.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "1.0.0" }) });
    await first.admin("/admin/api/releases/1.0.0/assets/App-1.0.0-x64-setup.exe", { method: "PUT", body: upload });
    await first.query("UPDATE release_assets SET sha512 = '', sha1 = ''");
    await first.stop();
    const again = await startGantry({ databasePath: join(dir, "gantry.db"), config: { dataDir: dir } });
    try {
      const asset = async () => (((await (await again.admin("/admin/api/releases/1.0.0")).json()) as any).assets[0]);
      await pollUntil(asset, (a) => a.sha512 !== "", { what: "the backfill at start" });
      expect(await asset()).toMatchObject(expected(upload));
    } finally {
      await again.stop();
    }
  });
});
