/**
 * /api/v1/latest and /update/latest.json agree: the document gives `manifest.url` exactly when the manifest
 * answers 200 (a downloadable web-*.zip offered to everyone), and `manifest: null` when it would answer 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry();
});
afterAll(async () => {
  await g.stop();
});

async function both(): Promise<{ manifest: unknown; legacyStatus: number }> {
  const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
  const legacy = await fetch(`${g.url}/update/latest.json`);
  await legacy.arrayBuffer();
  return { manifest: doc.manifest, legacyStatus: legacy.status };
}

async function publish(version: string, assets: string[]): Promise<void> {
  expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version }) })).status).toBe(201);
  for (const name of assets) {
    const up = await g.admin(`/admin/api/releases/${version}/assets/${name}`, { method: "PUT", body: new Uint8Array(64).fill(7), headers: { "content-type": "application/octet-stream" } });
    expect(up.status).toBe(201);
  }
}

test("a release without a web bundle: no manifest link, and the manifest is 404; with one: the link, and 200", async () => {
  await publish("1.0.0", ["Gantry-1.0.0-x64-setup.exe"]);
  // Before: manifest.url given while /update/latest.json answered 404.
  expect(await both()).toEqual({ manifest: null, legacyStatus: 404 });
  await publish("1.1.0", ["Gantry-1.1.0-x64-setup.exe", "web-1.1.0.zip"]);
  expect(await both()).toEqual({ manifest: { url: `${g.url}/update/latest.json` }, legacyStatus: 200 });
  // A newer release without a bundle: the manifest still answers (1.1.0's zip), so the link stays.
  await publish("1.2.0", ["Gantry-1.2.0-x64-setup.exe"]);
  expect(await both()).toEqual({ manifest: { url: `${g.url}/update/latest.json` }, legacyStatus: 200 });
});
