/** The demo's sample releases: published into the mirror, downloadable, and shown by the curl lines. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { seedDemoReleases } from "../../src/cli/demo-seed-releases";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry();
});
afterAll(() => g.stop());

test("two releases with mirrored files; every curl line answers; seeding twice is harmless", async () => {
  await seedDemoReleases(g.deps);
  const examples = (await seedDemoReleases(g.deps))(g.url);
  const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
  expect(doc.version).toBe("1.2.0");
  expect(doc.assets.every((a: any) => a.source === "mirror" && /^sha256:[0-9a-f]{64}$/.test(a.sha256))).toBe(true);
  expect(doc.assets.filter((a: any) => a.recommended).map((a: any) => a.name).sort()).toEqual([
    "Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64-setup.exe", "Gantry-1.2.0-x64.dmg", "Gantry-1.2.0-x86_64.AppImage", "web-1.2.0.zip",
  ]);
  const list = await (await g.admin("/admin/api/releases")).json();
  expect(list.data.map((r: any) => r.version)).toEqual(["1.2.0", "1.1.0"]);

  for (const a of doc.assets) {
    const body = new Uint8Array(await (await fetch(a.downloadUrl)).arrayBuffer());
    expect(body.length).toBe(a.size);
    expect(body.length).toBeGreaterThanOrEqual(2048);
    expect(`sha256:${new Bun.CryptoHasher("sha256").update(body).digest("hex")}`).toBe(a.sha256);
  }
  expect((await (await fetch(`${g.url}/update/latest.json`)).json()).name).toBe("web-1.2.0.zip");

  const urls = [...examples.matchAll(/(https?:\/\/[^\s'"]+)/g)].map((m) => m[1]);
  expect(urls.length).toBeGreaterThanOrEqual(5);
  for (const url of urls) {
    const res = url.includes("/admin/") ? await g.admin(url.slice(g.url.length)) : await fetch(url);
    expect(res.status).toBe(200);
  }
});
