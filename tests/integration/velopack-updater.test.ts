/**
 * Velopack against Gantry (issue 35): `releases.{channel}.json` read by the real Velopack client (npm velopack's
 * native part, run under Node as an installed Linux app), which finds the update and downloads its package through
 * Gantry; the feed's shape, channels, staged rollouts by X-App-Client-ID, localVersion for pauses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf } from "../support/fake-github";
import { tempDirs } from "../support/temp-dirs";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const CLIENT = join(ROOT, "tests/support/velopack-client.cjs");
const tempDir = tempDirs();
const hex = (alg: string, b: Uint8Array) => createHash(alg).update(b).digest("hex").toUpperCase();

const files: Record<string, Record<string, Uint8Array<ArrayBuffer>>> = {
  "1.0.0": { "MyApp-1.0.0-linux-full.nupkg": bytesOf("l-100", 20_000), "MyApp-1.0.0-full.nupkg": bytesOf("w-100", 20_000) },
  "1.1.0": { "MyApp-1.1.0-linux-full.nupkg": bytesOf("l-110", 24_000), "MyApp-1.1.0-linux-delta.nupkg": bytesOf("ld-110", 3_000), "MyApp-1.1.0-full.nupkg": bytesOf("w-110", 21_000) },
  "1.2.0": { "MyApp-1.2.0-linux-full.nupkg": bytesOf("l-120", 25_000) },
};

let g: Gantry;
const ids = new Map<string, number>();

function clientId(inside: boolean): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (rolloutBucket(id, "1.2.0") < 5000 === inside) return id;
  }
}

async function runClient(version: string, download = false): Promise<any> {
  const cfg = { feedUrl: `${g.url}/update/velopack`, version, dir: tempDir("velopack-client"), download };
  const proc = Bun.spawn(["node", CLIENT, JSON.stringify(cfg)], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (!line.startsWith("{")) throw new Error(`the client printed no result: ${stdout} ${stderr}`);
  return { ...JSON.parse(line), dir: cfg.dir };
}

beforeAll(async () => {
  g = await startGantry({});
  for (const [version, named] of Object.entries(files)) {
    const body = { version, notes: `Notes of ${version}`, ...(version === "1.2.0" ? { rolloutPercent: 50 } : {}) };
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
    for (const [name, bytes] of Object.entries(named)) {
      expect((await g.admin(`/admin/api/releases/${version}/assets/${name}`, { method: "PUT", body: bytes })).status).toBeLessThan(300);
    }
    for (const a of ((await (await g.admin(`/admin/api/releases/${version}`)).json()) as any).assets) ids.set(a.name, a.id);
  }
});
afterAll(async () => {
  await g.stop();
});

const asset = (name: string, version: string, type: "Full" | "Delta") => ({
  PackageId: "MyApp",
  Version: version,
  Type: type,
  FileName: name,
  SHA1: hex("sha1", files[version][name]),
  SHA256: hex("sha256", files[version][name]),
  Size: files[version][name].length,
  NotesMarkdown: `Notes of ${version}`,
});

describe("the feed", () => {
  test("releases.linux.json: the full package and the delta of the release offered; releases.win.json: the Windows one", async () => {
    const res = await fetch(`${g.url}/update/velopack/releases.linux.json?localVersion=1.0.0&id=MyApp`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ Assets: [asset("MyApp-1.1.0-linux-full.nupkg", "1.1.0", "Full"), asset("MyApp-1.1.0-linux-delta.nupkg", "1.1.0", "Delta")] });
    expect(await (await fetch(`${g.url}/update/velopack/releases.win.json`)).json()).toEqual({ Assets: [asset("MyApp-1.1.0-full.nupkg", "1.1.0", "Full")] });
    expect(await (await fetch(`${g.url}/update/velopack/releases.beta.json`)).json()).toEqual({ Assets: [] });
    expect((await fetch(`${g.url}/update/velopack/RELEASES`)).status).toBe(404);
  });

  test("a package named by the feed is served from beside it (a 302 to a download link); another name is a 404", async () => {
    const res = await fetch(`${g.url}/update/velopack/MyApp-1.1.0-linux-full.nupkg`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(files["1.1.0"]["MyApp-1.1.0-linux-full.nupkg"]));
    expect((await fetch(`${g.url}/update/velopack/MyApp-9.9.9-full.nupkg`)).status).toBe(404);
  });

  test("staged rollouts by X-App-Client-ID (or client_id)", async () => {
    const inside = (await (await fetch(`${g.url}/update/velopack/releases.linux.json`, { headers: { "X-App-Client-ID": clientId(true) } })).json()) as any;
    expect(inside.Assets.map((a: any) => a.Version)).toEqual(["1.2.0"]);
    const outside = (await (await fetch(`${g.url}/update/velopack/releases.linux.json?client_id=${clientId(false)}`)).json()) as any;
    expect(outside.Assets[0].Version).toBe("1.1.0");
  });
});

describe("the real Velopack client", () => {
  test("finds 1.1.0 and downloads its package through Gantry, byte for byte", async () => {
    const run = await runClient("1.0.0", true);
    expect(run.requested).toContain(`${g.url}/update/velopack/releases.linux.json?localVersion=1.0.0&id=MyApp`);
    expect(run.target).toMatchObject({ PackageId: "MyApp", Version: "1.1.0", Type: "Full", SHA1: hex("sha1", files["1.1.0"]["MyApp-1.1.0-linux-full.nupkg"]), Size: 24_000 });
    expect(run.downloadError).toBeUndefined();
    expect(run.packages).toEqual(["MyApp-1.1.0-linux-full.nupkg"]);
    expect(new Uint8Array(readFileSync(join(run.dir, "app/packages/MyApp-1.1.0-linux-full.nupkg")))).toEqual(new Uint8Array(files["1.1.0"]["MyApp-1.1.0-linux-full.nupkg"]));
  }, 30_000);

  test("an app on the newest version is up to date", async () => {
    expect((await runClient("1.1.0")).target).toBeNull();
  }, 30_000);
});
