/**
 * electron-updater's generic provider against Gantry (issue 35): the YAML feeds, and the real electron-updater from
 * npm run under plain Node with a stand-in for Electron (tests/support/electron-updater-client.cjs): the update
 * check, the staging decided by `x-user-staging-id` (Gantry's rollout rule, as /api/v1/latest) or by the client from
 * `stagingPercentage` when it sends no id, and the download through Gantry's links with the client's own SHA-512
 * check, which refuses bytes that do not match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf } from "../support/fake-github";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const CLIENT = join(ROOT, "tests/support/electron-updater-client.cjs");
const STAND_IN = join(ROOT, "tests/support/electron-stand-in");
const tempDir = tempDirs();
const b64sha512 = (b: Uint8Array) => createHash("sha512").update(b).digest("base64");

const PERCENT = 30;
const files = {
  "1.0.0": { "StandInApp-1.0.0.AppImage": bytesOf("ai-100", 40_000), "StandInApp-Setup-1.0.0.exe": bytesOf("exe-100", 30_000) },
  "1.1.0": {
    "StandInApp-1.1.0.AppImage": bytesOf("ai-110", 120_000),
    "StandInApp-1.1.0-arm64.AppImage": bytesOf("ai-arm-110", 50_000),
    "StandInApp-1.1.0.AppImage.blockmap": bytesOf("bm-110", 900),
    "StandInApp-Setup-1.1.0.exe": bytesOf("exe-110", 60_000),
    "StandInApp-1.1.0-mac.zip": bytesOf("mac-110", 20_000),
    "StandInApp-1.1.0-arm64-mac.zip": bytesOf("mac-arm-110", 21_000),
  },
} as const;
const newAppImage = files["1.1.0"]["StandInApp-1.1.0.AppImage"];

/** A staging id Gantry places inside (or outside) 1.1.0's rollout, by the rule of /api/v1/latest. */
function stagingId(inside: boolean): string {
  for (;;) {
    const id = randomUUID();
    if (rolloutBucket(id, "1.1.0") < PERCENT * 100 === inside) return id;
  }
}

/** A UUID electron-updater's own staging rule places below (or above) a share: its last four bytes over 2^32-1. */
function electronSideId(below: boolean): string {
  for (;;) {
    const id = randomUUID();
    const share = Buffer.from(id.replace(/-/g, ""), "hex").readUInt32BE(12) / 0xffffffff;
    if (share < PERCENT / 100 === below) return id;
  }
}

interface ClientRun {
  version?: string;
  isUpdateAvailable?: boolean;
  stagingPercentage?: number | null;
  staging?: string | null;
  downloaded?: string;
  downloadedSha512?: string;
  downloadError?: string;
  error?: string;
}

async function runClient(opts: { stagingId: string; download?: boolean; blankStagingHeader?: boolean; feed?: string }): Promise<ClientRun> {
  const dir = tempDir("electron-client");
  const cfg = { feedUrl: opts.feed ?? `${g.url}/update/electron`, version: "1.0.0", stagingId: opts.stagingId, dir, download: opts.download ?? false, blankStagingHeader: opts.blankStagingHeader ?? false };
  const proc = Bun.spawn(["node", CLIENT, JSON.stringify(cfg)], { cwd: ROOT, env: { ...process.env, NODE_PATH: STAND_IN }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (!line.startsWith("{")) throw new Error(`the client printed no result: ${stdout} ${stderr}`);
  return JSON.parse(line);
}

const feed = (name: string, headers: Record<string, string> = {}) => fetch(`${g.url}/update/electron/${name}`, { headers });

let g: Gantry;
const assetIds = new Map<string, number>();

beforeAll(async () => {
  g = await startGantry({});
  for (const [version, named] of Object.entries(files)) {
    const body = { version, notes: `Notes of ${version}: "quoted"\nsecond line`, publishedAt: "2026-11-20T10:00:00.000Z", ...(version === "1.1.0" ? { rolloutPercent: PERCENT } : {}) };
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
    for (const [name, bytes] of Object.entries(named)) {
      expect((await g.admin(`/admin/api/releases/${version}/assets/${name}`, { method: "PUT", body: bytes })).status).toBeLessThan(300);
    }
    const r = (await (await g.admin(`/admin/api/releases/${version}`)).json()) as any;
    for (const a of r.assets) assetIds.set(a.name, a.id);
  }
});
afterAll(async () => {
  await g.stop();
});

describe("the feeds", () => {
  test("latest-linux.yml: with an id in the rollout's group the staged release, without stagingPercentage; outside it the previous one", async () => {
    const inside = await feed("latest-linux.yml", { "x-user-staging-id": stagingId(true) });
    expect(inside.status).toBe(200);
    expect(inside.headers.get("content-type")).toBe("text/yaml; charset=utf-8");
    expect(inside.headers.get("vary")).toContain("x-user-staging-id");
    const yml = await inside.text();
    const url = `${g.url}/update/files/${assetIds.get("StandInApp-1.1.0.AppImage")}/StandInApp-1.1.0.AppImage`;
    expect(yml).toBe(
      [
        'version: "1.1.0"',
        "files:",
        `  - url: "${url}"`,
        `    sha512: "${b64sha512(newAppImage)}"`,
        `    size: ${newAppImage.length}`,
        `path: "${url}"`,
        `sha512: "${b64sha512(newAppImage)}"`,
        'releaseDate: "2026-11-20T10:00:00.000Z"',
        'releaseNotes: "Notes of 1.1.0: \\"quoted\\"\\nsecond line"',
        "",
      ].join("\n"),
    );
    const outside = await (await feed("latest-linux.yml", { "x-user-staging-id": stagingId(false) })).text();
    expect(outside).toContain('version: "1.0.0"');
    expect(outside).not.toContain("stagingPercentage");
  });

  test("without an id: the staged release with its share as stagingPercentage, for the client to decide", async () => {
    const yml = await (await feed("latest-linux.yml")).text();
    expect(yml).toContain('version: "1.1.0"');
    expect(yml).toEndWith(`stagingPercentage: ${PERCENT}\n`);
  });

  test("latest.yml (Windows: the NSIS installer), latest-mac.yml (every zip), latest-linux-arm64.yml", async () => {
    const id = { "x-user-staging-id": stagingId(true) };
    const win = await (await feed("latest.yml", id)).text();
    expect(win.match(/- url: .*/g)).toEqual([`- url: "${g.url}/update/files/${assetIds.get("StandInApp-Setup-1.1.0.exe")}/StandInApp-Setup-1.1.0.exe"`]);
    const mac = await (await feed("latest-mac.yml", id)).text();
    expect(mac.match(/- url: .*\/([^/"]+)"/g)!.map((l) => l.replace(/.*\//, ""))).toEqual(['StandInApp-1.1.0-mac.zip"', 'StandInApp-1.1.0-arm64-mac.zip"']);
    const arm = await (await feed("latest-linux-arm64.yml", id)).text();
    expect(arm).toContain("/StandInApp-1.1.0-arm64.AppImage\"");
    // 1.0.0 had no arm64 build: without one in the rollout there is nothing to offer.
    const armOutside = await feed("latest-linux-arm64.yml", { "x-user-staging-id": stagingId(false) });
    expect(armOutside.status).toBe(404);
    expect(((await armOutside.json()) as any).error.code).toBe("not_found");
  });

  test("other names are a 404 with the error envelope; a channel other than latest also offers pre-releases", async () => {
    for (const name of ["latest-windows.yml", "../latest.yml", "latest.json", "LATEST.yml"]) {
      const res = await feed(encodeURIComponent(name));
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.type).toBeString();
    }
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "1.2.0-beta.1" }) })).status).toBe(201);
    expect((await g.admin("/admin/api/releases/1.2.0-beta.1/assets/StandInApp-1.2.0-beta.1.AppImage", { method: "PUT", body: bytesOf("beta", 1000) })).status).toBeLessThan(300);
    const beta = await pollUntil(async () => (await feed("beta-linux.yml")).text(), (t) => t.includes("1.2.0-beta.1"), { what: "beta feed" });
    expect(beta.value).toContain('version: "1.2.0-beta.1"');
    expect(await (await feed("latest-linux.yml", { "x-user-staging-id": stagingId(false) })).text()).toContain('version: "1.0.0"');
    expect((await g.admin("/admin/api/releases/1.2.0-beta.1", { method: "DELETE" })).status).toBe(204);
  });

  test("a paused rollout takes nobody new: an id of its group that does not run it, and a request without an id, get the previous release", async () => {
    const inside = stagingId(true);
    expect((await g.admin("/admin/api/releases/1.1.0/pause", { method: "POST" })).status).toBe(200);
    try {
      await pollUntil(async () => (await feed("latest-linux.yml", { "x-user-staging-id": inside })).text(), (t) => t.includes('"1.0.0"'), { what: "pause seen" });
      const anonymous = await (await feed("latest-linux.yml")).text();
      expect(anonymous).toContain('version: "1.0.0"');
      expect(anonymous).not.toContain("stagingPercentage");
    } finally {
      expect((await g.admin("/admin/api/releases/1.1.0/resume", { method: "POST" })).status).toBe(200);
    }
    await pollUntil(async () => (await feed("latest-linux.yml", { "x-user-staging-id": inside })).text(), (t) => t.includes('"1.1.0"'), { what: "resume seen" });
  });

  test("a blockmap published beside a file is found at the file's address + .blockmap", async () => {
    const id = assetIds.get("StandInApp-1.1.0.AppImage")!;
    const res = await fetch(`${g.url}/update/files/${id}/StandInApp-1.1.0.AppImage.blockmap`);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(files["1.1.0"]["StandInApp-1.1.0.AppImage.blockmap"]));
    expect((await fetch(`${g.url}/update/files/${id}/another-name.AppImage`, { redirect: "manual" })).status).toBe(404);
    expect((await fetch(`${g.url}/update/files/x/StandInApp-1.1.0.AppImage`, { redirect: "manual" })).status).toBe(400);
  });
});

describe("the real electron-updater", () => {
  test("a client in the rollout's group finds 1.1.0 and downloads it through Gantry, its SHA-512 checked; the download is counted", async () => {
    const before = ((await (await g.admin("/admin/api/releases/1.1.0")).json()) as any).assets.find((a: any) => a.name === "StandInApp-1.1.0.AppImage").downloads;
    const run = await runClient({ stagingId: stagingId(true), download: true });
    expect(run).toMatchObject({ version: "1.1.0", isUpdateAvailable: true, stagingPercentage: null });
    expect(run.downloadError).toBeUndefined();
    expect(run.downloadedSha512).toBe(b64sha512(newAppImage));
    expect(new Uint8Array(readFileSync(run.downloaded!))).toEqual(new Uint8Array(newAppImage));
    await pollUntil(
      async () => ((await (await g.admin("/admin/api/releases/1.1.0")).json()) as any).assets.find((a: any) => a.name === "StandInApp-1.1.0.AppImage").downloads,
      (n) => n === before + 1,
      { what: "the download counted" },
    );
  }, 30_000);

  test("a client outside the group is up to date", async () => {
    expect(await runClient({ stagingId: stagingId(false) })).toMatchObject({ version: "1.0.0", isUpdateAvailable: false });
  }, 30_000);

  test("a client that sends no staging id decides from stagingPercentage by its own id", async () => {
    const below = await runClient({ stagingId: electronSideId(true), blankStagingHeader: true });
    expect(below).toMatchObject({ version: "1.1.0", isUpdateAvailable: true, stagingPercentage: PERCENT });
    expect(below.staging).toStartWith("Staging percentage: 0.3");
    const above = await runClient({ stagingId: electronSideId(false), blankStagingHeader: true });
    expect(above).toMatchObject({ version: "1.1.0", isUpdateAvailable: false, stagingPercentage: PERCENT });
  }, 30_000);

  test("update checks with a staging id count as online clients", async () => {
    const stats = await pollUntil(async () => ((await (await g.admin("/admin/api/stats/clients")).json()) as any), (s) => (s.byRuntime?.["electron-updater"] ?? 0) >= 2, { what: "online electron-updater clients" });
    expect(stats.value.byPlatform.linux).toBeGreaterThanOrEqual(2);
  });

  test("a yanked release is offered to nobody: the group's client gets the previous one", async () => {
    const inside = stagingId(true);
    expect((await g.admin("/admin/api/releases/1.1.0/yank", { method: "POST" })).status).toBe(200);
    await pollUntil(async () => (await feed("latest-linux.yml", { "x-user-staging-id": inside })).text(), (t) => t.includes('"1.0.0"'), { what: "yank seen" });
    expect(await runClient({ stagingId: inside })).toMatchObject({ version: "1.0.0", isUpdateAvailable: false });
    expect((await g.admin("/admin/api/releases/1.1.0/unyank", { method: "POST" })).status).toBe(200);
  }, 30_000);

  test("bytes that do not match the feed's SHA-512 are refused by the client", async () => {
    const wrong = b64sha512(bytesOf("something else", 10));
    await g.query("UPDATE release_assets SET sha512 = $1 WHERE name = $2", wrong, "StandInApp-1.1.0.AppImage");
    const inside = stagingId(true);
    await pollUntil(async () => (await feed("latest-linux.yml", { "x-user-staging-id": inside })).text(), (t) => t.includes(wrong), { what: "the changed digest" });
    const run = await runClient({ stagingId: inside, download: true });
    expect(run).toMatchObject({ version: "1.1.0", isUpdateAvailable: true });
    expect(run.downloadError).toContain("sha512 checksum mismatch");
  }, 30_000);
});
